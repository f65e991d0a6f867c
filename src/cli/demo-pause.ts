/**
 * `symfonic demo --suspend` / `--resume FILE` around the run: what a resume reads before anything
 * starts, and what either writes once the run is over (a snapshot when the tree suspended; the
 * whole trace, and the spent snapshot removed, when a resume ran).
 */
import { rmSync } from 'node:fs';
import type { AgentResponse } from '../agent/agent-response.js';
import type { Decisions } from '../run/interruption.js';
import type { RunSnapshot } from '../run/snapshot/run-snapshot.js';
import type { SpanRecord } from '../trace/span-records.js';
import type { WrittenSuspension } from './demo-pause-report.js';
import type { PauseSettings } from './demo-pause-settings.js';
import { symfonicCommand } from './invocation.js';
import { decisionsFor, readEarlierSpans, readSnapshotFile, traceFileOf, writeSuspension, writeTrace } from './demo-snapshot-file.js';

/** A resume, ready to go: the checked snapshot, a decision for each of its interruptions, and the spans of the stretches before. */
export interface Resumed {
  readonly snapshot: RunSnapshot;
  readonly decisions: Decisions;
  readonly earlier: readonly SpanRecord[];
  /** Why the picture lacks the runs before the pause (their trace file is gone or unreadable). */
  readonly note?: string;
}

/** Reads and checks the file and the decisions; an InputError (exit 2) for any defect, before anything runs. */
export async function openResume(p: PauseSettings): Promise<Resumed> {
  const file = p.resumeFile!;
  const snapshot = readSnapshotFile(file, p.snapshotKey);
  const decisions = decisionsFor(snapshot, p, file);
  const { spans, note } = await readEarlierSpans(file);
  return { snapshot, decisions, earlier: spans, ...(note !== undefined ? { note } : {}) };
}

/** What the run left: a suspension written down, or a line saying how it ended. */
export interface Paused {
  readonly written?: WrittenSuspension;
  readonly done?: string;
}

/** Writes what the run left (see the file's comment). Throws when a file cannot be written. */
export function settlePause(p: PauseSettings, response: AgentResponse | undefined, spans: readonly SpanRecord[]): Paused {
  if (response?.status === 'suspended' && response.snapshot !== null) {
    const bytes = writeSuspension(p.snapshotFile, response.snapshot, spans);
    if (p.resumeFile !== undefined && p.resumeFile !== p.snapshotFile) rmSync(p.resumeFile, { force: true });
    return { written: { file: p.snapshotFile, traceFile: traceFileOf(p.snapshotFile), bytes, interruptions: response.interruptions } };
  }
  if (p.resumeFile === undefined) return { done: 'the tree ended without waiting on anyone, so no snapshot was written' };
  // The resume ran: the decisions took effect, so the snapshot is spent (resumed again, it would
  // run the approved call again); the trace beside it now holds the whole tree.
  const traceFile = traceFileOf(p.resumeFile);
  writeTrace(traceFile, spans);
  rmSync(p.resumeFile, { force: true });
  return { done: `removed ${p.resumeFile}, as a snapshot resumes once; the whole trace is in ${traceFile} (${symfonicCommand()} tree ${traceFile} draws it)` };
}

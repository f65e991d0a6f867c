/**
 * The files of `symfonic demo --suspend` / `--resume`: the snapshot, exactly the JSON of
 * `response.snapshot`, and beside it the trace of the tree so far (OTLP/JSON lines), so that the
 * process that resumes can draw the whole tree, not only the runs it goes on with.
 */
import { readFileSync, statSync } from 'node:fs';
import { SnapshotError } from '../core/errors.js';
import type { Decision, Decisions } from '../run/interruption.js';
import { decisionFits, decisionsText, firstDecision, kindWithArticle, takes, type InterruptionKind } from '../run/interruption-kinds.js';
import { waitsOf } from '../agent/run-suspension.js';
import { checkSignature, readSnapshot } from '../run/snapshot/snapshot-codec.js';
import type { RunSnapshot, WaitingInterruption } from '../run/snapshot/run-snapshot.js';
import type { EncryptedSnapshot } from '../run/snapshot/snapshot-options.js';
import type { SpanRecord } from '../trace/span-records.js';
import { InputError } from './args.js';
import { cliVerb, type PauseSettings } from './demo-pause-settings.js';
import { toOtlpJson } from './otlp-json.js';
import { replaceFile } from './replace-file.js';
import { readSpans } from './trace-file.js';

/** No snapshot of the demo's tree comes near this; a larger file is not one (and is not read into memory). */
const MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024;

/** The demo's root agent: a snapshot of any other root is not the demo's. */
export const DEMO_ROOT = 'router';

/** "paused.snapshot.json" → "paused.trace.jsonl"; "x.json" → "x.trace.jsonl"; "x" → "x.trace.jsonl". */
export function traceFileOf(snapshotFile: string): string {
  return snapshotFile.replace(/(\.snapshot)?\.json$/, '') + '.trace.jsonl';
}

const problem = (error: NodeJS.ErrnoException) =>
  error.code === 'ENOENT' ? 'no such file' : error.code === 'EISDIR' ? 'it is a directory' : error.code === 'EACCES' ? 'permission denied' : error.message;

/** Writes the snapshot and the trace so far, each replacing what is there (never through a symlink); returns the snapshot's size in bytes. */
export function writeSuspension(file: string, snapshot: RunSnapshot | EncryptedSnapshot, spans: readonly SpanRecord[]): number {
  const text = JSON.stringify(snapshot);
  try {
    replaceFile(file, text);
    writeTrace(traceFileOf(file), spans);
  } catch (error) {
    throw new Error(`cannot write ${(error as { path?: string }).path ?? file}: ${problem(error as NodeJS.ErrnoException)}`);
  }
  return Buffer.byteLength(text);
}

/** The tree's spans, whole, as one ExportTraceServiceRequest line (what `symfonic tree FILE` reads). */
export function writeTrace(file: string, spans: readonly SpanRecord[]): void {
  replaceFile(file, JSON.stringify(toOtlpJson(spans)) + '\n');
}

/**
 * The spans the earlier stretches left beside the snapshot. The trace only completes the
 * picture, so a missing or unreadable one is a note (the runs resumed here are still drawn).
 */
export async function readEarlierSpans(snapshotFile: string): Promise<{ spans: SpanRecord[]; note?: string }> {
  const file = traceFileOf(snapshotFile);
  try {
    return { spans: await readSpans(file) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const why = /no such file/.test(message) ? `${file} is gone` : message;
    return { spans: [], note: `${why}: the picture shows only the runs resumed here` };
  }
}

/** The snapshot in `file`, checked as agent.resume checks it (shape, version, root agent, signature): a SnapshotError's text, as an InputError. */
export function readSnapshotFile(file: string, key: string): RunSnapshot {
  let text: string;
  try {
    const size = statSync(file).size;
    if (size > MAX_SNAPSHOT_BYTES) throw new InputError(`${file}: ${size} bytes is no snapshot of the demo's tree (they are a few KB); pass the file symfonic demo --suspend wrote`, 'demo');
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`cannot read ${file}: ${problem(error as NodeJS.ErrnoException)} (symfonic demo --suspend writes it)`, 'demo');
  }
  try {
    const snapshot = readSnapshot(text);
    if (snapshot.agent !== DEMO_ROOT) throw new SnapshotError(`this snapshot is of agent "${snapshot.agent}", not the demo's "${DEMO_ROOT}": it was not written by symfonic demo --suspend.`);
    checkSignature(snapshot, key, DEMO_ROOT);
    return snapshot;
  } catch (error) {
    if (error instanceof SnapshotError) throw new InputError(`${file}: ${error.message}`, 'demo');
    throw error;
  }
}

/** The decisions a kind takes, as --decide writes them. */
const forms = (kind: InterruptionKind) => decisionsText(kind, (form, reasonRead) => `ID=${form === 'decline' && reasonRead ? 'decline[:REASON]' : cliVerb(form)}`);

const listed = (waits: Map<string, WaitingInterruption>) => [...waits.values()].map((w) => `${w.id} (${w.kind})`).join(', ');

/** What a kind's default decision means for --approve-all: approve an approval; a question or a budget needs its own --decide. */
function approved(w: WaitingInterruption, file: string): Decision {
  if (takes(w.kind, 'approve')) return { approve: true };
  throw new InputError(`${file}: ${w.id} is a ${w.kind}, which --approve-all does not decide: add --decide ${w.id}=${cliVerb(firstDecision(w.kind))}`, 'demo');
}

/** The decisions for every interruption the snapshot waits on, from --decide and --approve-all; exit 2 naming what is wrong. */
export function decisionsFor(snapshot: RunSnapshot, p: PauseSettings, file: string): Decisions {
  const waits = waitsOf(snapshot.run);
  const out: Record<string, Decision> = {};
  for (const d of p.decide) {
    const w = waits.get(d.id);
    if (w === undefined) throw new InputError(`--decide "${d.raw}": ${file} does not wait on "${d.id}"; it waits on ${listed(waits)}`, 'demo');
    if (!decisionFits(w.kind, d.decision)) throw new InputError(`--decide "${d.raw}": ${d.id} waits for ${kindWithArticle(w.kind)}: decide it with ${forms(w.kind).replaceAll('ID', d.id)}`, 'demo');
    out[d.id] = d.decision;
  }
  const open = [...waits.values()].filter((w) => !(w.id in out));
  if (open.length === 0) return out;
  if (p.approveAll) {
    for (const w of open) out[w.id] = approved(w, file);
    return out;
  }
  const each = open.map((w) => `--decide ${w.id}=${cliVerb(firstDecision(w.kind))}`).join(' ');
  throw new InputError(
    `${file} waits on ${open.length === 1 ? 'an interruption' : `${open.length} interruptions`} without a decision: ${listed(new Map(open.map((w) => [w.id, w])))}. ` +
      `Add ${each}${open.every((w) => takes(w.kind, 'approve')) ? ', or --approve-all' : ''}; nothing was run`,
    'demo',
  );
}

/**
 * A remote task in input-required, as the caller's tree takes it: its interruptions placed in
 * this tree (lineage, ids unique across it), and the remote wait its delegator's snapshot keeps.
 */
import type { Decisions, Interruption } from '../run/interruption.js';
import type { RunFrame } from '../run/run-frame.js';
import type { RemoteInterruption, RemoteWait } from '../run/snapshot/run-snapshot.js';
import { isObject } from './rpc-envelope.js';
import type { RemoteTaskReader } from './remote-task.js';
import type { AbsorbedUsage } from './usage-report.js';
import { isId } from '../run/ids.js';
import { MAX_WIRE_DEPTH } from './wire.js';
import type { WireInterruption } from './pause-wire.js';

/** A call that resumes the remote task its child run paused on, with the tree's decisions. */
export interface RemoteResume {
  readonly wait: RemoteWait;
  readonly decisions: Decisions;
}

/** A call whose remote task waits for decisions: what the caller's tree suspends with. */
export class RemotePaused {
  constructor(
    readonly interruptions: readonly Interruption[],
    readonly wait: RemoteWait,
    readonly spend: AbsorbedUsage,
  ) {}
}

type Lineage = Pick<Interruption, 'runId' | 'rootRunId' | 'parentRunId' | 'depth'> & { callId?: string };

/**
 * The lineage a symfonic remote reported for interruption `id`, if it reads as a run of this
 * tree below the call's child run (the remote was placed in it by the usage-lineage baggage).
 */
function reportedLineage(reported: readonly unknown[] | undefined, id: string, frame: RunFrame): Lineage | undefined {
  const entry = reported?.find((e) => isObject(e) && e.id === id);
  if (!isObject(entry)) return undefined;
  const { runId, rootRunId, parentRunId, depth, callId } = entry;
  if (typeof runId !== 'string' || !isId(runId) || rootRunId !== frame.rootRunId) return undefined;
  if (!(parentRunId === null || (typeof parentRunId === 'string' && isId(parentRunId)))) return undefined;
  if (typeof depth !== 'number' || !Number.isInteger(depth) || depth < frame.depth || depth > MAX_WIRE_DEPTH) return undefined;
  const out: Lineage = { runId, rootRunId, parentRunId, depth };
  if (typeof callId === 'string' && callId.length <= 256) out.callId = callId;
  return out;
}

/**
 * The remote's interruptions in this tree. A symfonic remote placed in this tree reports each
 * one's run, and its ids (`{runId}:{turn}:{call}`, of run ids minted for this tree or at random)
 * are unique here as they are; any other remote's are prefixed with the call's child run id,
 * which is. Undefined when the remote said it waits but not on what, or repeated an id.
 */
export function pausedInTree(name: string, frame: RunFrame, reader: RemoteTaskReader, spend: AbsorbedUsage, contextId: string = frame.runId): RemotePaused | undefined {
  const wire: readonly WireInterruption[] | undefined = reader.interruptions;
  if (wire === undefined || reader.taskId === undefined) return undefined;
  const interruptions: Interruption[] = [];
  const waits: RemoteInterruption[] = [];
  const seen = new Set<string>();
  for (const w of wire) {
    if (seen.has(w.id)) return undefined;
    seen.add(w.id);
    const lineage = reportedLineage(reader.interruptionLineage, w.id, frame);
    const id = lineage !== undefined && w.id.startsWith(`${lineage.runId}:`) ? w.id : `${frame.runId}:${w.id}`;
    const place = lineage ?? { runId: frame.runId, rootRunId: frame.rootRunId, parentRunId: frame.parentRunId, depth: frame.depth };
    const i: Interruption = { ...place, id, kind: w.kind, agent: w.agent || name };
    if (w.tool !== undefined) Object.assign(i, { tool: w.tool });
    if (w.input !== undefined) Object.assign(i, { input: w.input });
    if (w.question !== undefined) Object.assign(i, { question: w.question });
    if (w.limitName !== undefined) Object.assign(i, { limitName: w.limitName, ...(frame.scope ? { tenantId: frame.scope.tenantId } : {}) });
    interruptions.push(i);
    waits.push(id === w.id ? { id, kind: w.kind } : { id, kind: w.kind, remoteId: w.id });
  }
  // The task is found again by its id; the context is the call's (the child run's id, or its session's).
  const wait: RemoteWait = { agent: name, taskId: reader.taskId, contextId, interruptions: waits };
  return new RemotePaused(interruptions, wait, spend);
}

/** The decisions for the remote task's interruptions, by the ids the remote gave them. */
export function remoteDecisions(wait: RemoteWait, decisions: Decisions): Decisions {
  const out: Record<string, Decisions[string]> = {};
  for (const w of wait.interruptions) out[w.remoteId ?? w.id] = decisions[w.id]!;
  return out;
}

import { roundUsd } from '../trace/usd.js';
import { trace } from '@opentelemetry/api';
import type { Interruption } from '../run/interruption.js';
import { RunFailure, type RunFigures, type Spent } from '../run/run-outcome.js';
import { loggableError } from '../core/redact.js';
import type { RunWait } from '../run/snapshot/run-snapshot.js';
import { SNAPSHOT_VERSION, type RunSnapshot, type SuspendedRun } from '../run/snapshot/run-snapshot.js';
import type { EncryptedSnapshot } from '../run/snapshot/snapshot-options.js';
import { sealRootSnapshot } from '../run/snapshot/snapshot-policy.js';
import { ATTR } from '../observability/attributes.js';
import { responseLineage } from '../run/run-projections.js';
import type { AgentResponse } from './agent-response.js';
import { EventHub, runFailed, runFinished } from './run-events.js';
import type { RunState } from './run-state.js';
import { failSpan, setRunTotals } from './run-span.js';
import { suspendedRun } from './run-suspension.js';
import { givenAgainOf } from './resume-options.js';

/** How a run left its loop: with an answer, with an error, or waiting. */
export type Exit = { text: string; output: unknown } | { error: unknown } | { paused: { waits: RunWait; interruptions: readonly Interruption[] } };

const NONE: readonly never[] = Object.freeze([]);

/**
 * The close sequence, for every exit: the account is closed (its store writes landed) before
 * this runs; then the run's delegation state, its span, its last event, the signal it owns and
 * the report to a wrapped-child adapter. An answer resolves; a suspension resolves too, with the
 * run written down (a snapshot at the root, the run's state at a door); an error rejects, as
 * itself for a caller's run() and as a RunFailure carrying what was spent at a delegation door.
 */
export function closeRun(run: RunState, exit: Exit, figures: RunFigures, started: number): AgentResponse {
  const { core, frame: f } = run;
  const delegatedTo = core.delegationContext ? core.delegationContext.close(f.runId) : NONE;
  const recording = run.span.isRecording();
  if (recording) setRunTotals(run.span, figures);
  const suspended = 'paused' in exit ? suspendedRun(run, exit.paused.waits, figures, delegatedTo, !run.atDoor) : undefined;
  if ('error' in exit) failSpan(run.span, exit.error);
  else if (suspended !== undefined && recording) run.span.setAttribute(ATTR.runStatus, 'suspended');
  run.span.end();
  run.events?.emit('error' in exit ? runFailed(exit.error) : 'paused' in exit ? { type: 'run.suspended', interruptions: exit.paused.interruptions } : runFinished(figures));
  run.owned?.dispose();
  const spent: Spent = { runId: f.runId, totalUsage: figures.total, totalCostUsd: figures.totalCostUsd, accounting: run.account.receipt };
  run.wrapped?.report(spent);
  const durationMs = performance.now() - started;
  if ('error' in exit) {
    if (core.logger.isLevelEnabled('warn')) run.log().warn({ err: loggableError(exit.error) }, 'run failed');
    throw run.atDoor ? new RunFailure(exit.error, spent) : exit.error;
  }
  if (core.logger.isLevelEnabled('debug')) run.log().debug({ duration_ms: durationMs, delegated_to: delegatedTo, suspended: suspended !== undefined }, 'run ended');
  const text = 'text' in exit ? exit.text : '';
  const sc = run.span.spanContext();
  const response: AgentResponse = {
    status: suspended === undefined ? 'completed' : 'suspended',
    finalResponse: text,
    text,
    messages: run.messages,
    ...responseLineage(f),
    delegatedTo,
    delegations: run.delegations() ?? NONE,
    usage: figures.own,
    totalUsage: figures.total,
    costUsd: roundUsd(figures.costUsd),
    totalCostUsd: roundUsd(figures.totalCostUsd),
    durationMs,
    accounting: spent.accounting!,
    interruptions: 'paused' in exit ? exit.paused.interruptions : NONE,
    snapshot: suspended === undefined || run.atDoor ? null : snapshotOf(run, suspended),
    traceId: trace.isSpanContextValid(sc) ? sc.traceId : null,
    sessionId: f.scope?.sessionId ?? null,
  };
  if ('text' in exit && run.outputType !== undefined) response.output = exit.output;
  // At a door, the delegator writes the child's state into its own.
  if (suspended !== undefined && run.atDoor) (response as { suspension?: SuspendedRun }).suspension = suspended;
  return response;
}

function snapshotOf(run: RunState, suspended: SuspendedRun): RunSnapshot | EncryptedSnapshot {
  const snapshot: { -readonly [K in keyof RunSnapshot]: RunSnapshot[K] } = { version: SNAPSHOT_VERSION, agent: run.core.name, run: suspended };
  // A root's sink is its hub (run-start.ts): where its tree's events were numbered.
  const events = run.frame.events;
  if (events instanceof EventHub && events.lastSeq > 0) snapshot.seq = events.lastSeq;
  const given = givenAgainOf(run);
  if (given !== undefined) snapshot.givenAgain = given;
  return sealRootSnapshot(run.core.snapshots, snapshot, run.core.logger);
}

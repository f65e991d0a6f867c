import { context as otelContext, trace } from '@opentelemetry/api';
import { ConfigurationError } from '../core/errors.js';
import { frameFromData, placedData } from '../run/run-driver.js';
import { claimSnapshot, isChecked, openSnapshot } from '../run/snapshot/snapshot-policy.js';
import { checkRoster } from './resume-roster.js';
import { checkDecisions } from './run-suspension.js';
import { newRunId } from '../run/ids.js';
import { TeeSink, type RunEventSink } from '../run/run-event.js';
import { freezeFrame, freezeFrameSignalledBy, type RunFrame } from '../run/run-frame.js';
import { rootSignal, type OwnedSignal } from '../core/signals.js';
import type { Placement } from '../delegation/framed-child.js';
import { wrappedCall, type WrappedCall } from '../delegation/wrapped-child.js';
import { checkToolChoice } from '../model/tool-choice.js';
import type { Message, ToolChoice } from '../model/types.js';
import { rootMemory, type SessionMemory } from '../session/session-memory.js';
import type { AgentCore } from './agent-core.js';
import { EventHub } from './run-events.js';
import { readRunOptions, type RunOptions, type RunRequest } from './run-options.js';
import { checkGivenAgain, readResumeOptions, type ResumeOptions } from './resume-options.js';

/**
 * Everything a run needs before it starts, whichever door it came in by: its placement (frame,
 * ledger offered, output wanted) and what only the door knows.
 */
export interface RunStart extends Placement {
  /** The signal the run owns and lets go of as it closes; a child's is its delegator's to dispose. */
  readonly owned: OwnedSignal | undefined;
  /** Earlier turns of the conversation (the facade's history), oldest first. */
  readonly history: readonly Message[] | undefined;
  /** A delegation door: a failure rejects as a RunFailure carrying what was spent; a caller's run() rejects with the error itself. */
  readonly door: boolean;
  /** The wrapped-child adapter waiting for what this run spent. */
  readonly wrapped: WrappedCall | undefined;
  /** How the run stands in its session, if it is in one with a store: a root's from its agent's sessions, a child's from its delegator. */
  readonly session: SessionMemory | undefined;
  /** The run's own toolChoice (a caller's run options), checked against the agent's tools. */
  readonly toolChoice?: ToolChoice | undefined;
}

/**
 * The start of a run a caller began (`run()`, `stream()`, the facade's `run()`): a root from its
 * validated options, or, inside a wrapped delegated child, that child.
 */
export function callerStart(core: AgentCore, options: RunOptions | undefined, hub?: EventHub): RunStart {
  const request = readRunOptions(options);
  const toolChoice = checkToolChoice(request.toolChoice, [...core.tools.keys()], `agent "${core.name}": run option`);
  if (request.history !== undefined && core.sessions !== undefined) {
    throw new ConfigurationError(`agent "${core.name}" keeps its conversations in a session store (sessions): a run cannot also be given history. Name the session in scope.sessionId, or use an agent without sessions to pass history by hand.`);
  }
  if (hub !== undefined && request.onEvent !== undefined) hub.listen(request.onEvent);
  const call = wrappedCall();
  const start = call === undefined ? rootStart(core, request, hub) : wrappedStart(core, call, request, hub);
  return toolChoice === undefined ? start : { ...start, toolChoice };
}

/** A run the delegator placed through the child door: its frame as given. */
export function doorStart(placement: Placement): RunStart {
  return { frame: placement.frame, ledger: placement.ledger, outputType: placement.outputType, resume: placement.resume, driver: placement.driver, owned: undefined, history: undefined, door: true, wrapped: undefined, session: placement.session };
}

/** A root run from its validated options; `hub` is the sink a stream made for it, which aborts the run through `owned`. */
function rootStart(core: AgentCore, request: RunRequest, hub?: EventHub, resumable = true): RunStart {
  const runId = request.runId ?? newRunId();
  const owned = rootSignal(request.signal, request.deadline, hub !== undefined);
  const frame = freezeFrameSignalledBy({
    runId,
    rootRunId: request.rootRunId ?? runId,
    parentRunId: request.parentRunId,
    depth: request.depth,
    maxDepth: request.maxDepth,
    scope: request.scope,
    deadline: request.deadline,
    traceContext: request.traceContext ?? otelContext.active(),
    askUser: request.askUser,
    events: hub ?? listenerSink(core, request),
    resumable,
  }, owned);
  // A root: a run placed under a parent by hand is a child of a tree that keeps its own session.
  const session = request.parentRunId === null ? rootMemory(core.sessions, request.scope, core.name) : undefined;
  return { frame, ledger: request.ledger, outputType: request.outputType, owned, history: request.history, door: false, wrapped: undefined, session };
}

/**
 * A run started inside a wrapped child (see wrapped-child.ts). The first takes the child's
 * placement whatever its options say: its caller's signal joins the frame's, and listeners of
 * its own hear it beside the tree's. A later run in the same async context (the wrapper running
 * a second agent, or again after it answered) is placed by the options it was given, acts only
 * for the child's tenant and accounts in the delegator's ledger: a wrapper must not be a way to
 * spend as another tenant, or past the tenant's budget, from inside a tree.
 */
function wrappedStart(core: AgentCore, call: WrappedCall, request: RunRequest, hub: EventHub | undefined): RunStart {
  const placed = call.placement.frame;
  if (call.taken) {
    if (request.scope !== undefined && placed.scope !== undefined && request.scope.tenantId !== placed.scope.tenantId) {
      throw new ConfigurationError(
        `agent "${core.name}" was started inside sub-agent run "${placed.runId}" of tenant "${placed.scope.tenantId}" with the scope of tenant ` +
          `"${request.scope.tenantId}": a run inside a delegated child acts for that child's tenant. Pass the options the child was given on, or none.`,
      );
    }
    // It spends as the child too: in its delegator's ledger (an agent with one of its own keeps
    // it), so the tenant's budget holds it and a delegator open there rolls it up; under an id
    // of its own, since the options passed on name the first run's.
    const later: RunRequest = { ...request, scope: request.scope ?? placed.scope, runId: request.runId === placed.runId ? undefined : request.runId, ledger: call.placement.ledger ?? request.ledger };
    // It reports to the call as it closes, so spend in a ledger of its own is taken in too.
    return { ...rootStart(core, later, hub, false), wrapped: call };
  }
  call.taken = true;
  const parent = request.signal === undefined ? placed.signal : AbortSignal.any([placed.signal, request.signal]);
  const owned = request.signal === undefined && hub === undefined ? undefined : rootSignal(parent, undefined, hub !== undefined);
  const own = hub ?? listenerSink(core, request);
  // The wrapper's code cannot be resumed: neither this run nor its subtree suspends.
  const frame: RunFrame = freezeFrame({
    ...placed,
    signal: owned?.signal ?? placed.signal,
    events: own === undefined ? placed.events : placed.events === undefined ? own : new TeeSink(placed.events, own),
    resumable: false,
  });
  const outputType = request.outputType ?? call.placement.outputType;
  return { frame, ledger: call.placement.ledger, outputType, owned, history: request.history, door: false, wrapped: call, session: call.placement.session };
}

/** The sink for an onEvent callback given in the options, if one was. */
function listenerSink(core: AgentCore, request: Pick<RunRequest, 'onEvent'>): RunEventSink | undefined {
  if (request.onEvent === undefined) return undefined;
  const hub = new EventHub(listenerErrorReporter(core));
  hub.listen(request.onEvent);
  return hub;
}

/** Logs an onEvent callback's throws: the first with its error, then at each power of ten, so a callback failing on every delta cannot flood the log. */
export function listenerErrorReporter(core: AgentCore): (error: unknown, count: number) => void {
  return (error, count) => {
    if (Math.log10(count) % 1 === 0) core.logger.warn({ err: error, listener_errors: count }, 'an onEvent callback threw; the run goes on');
  };
}

/**
 * A suspended tree going on: the snapshot opened and checked (encryption, version, agent,
 * signature, roster, decisions) and claimed in the agent's resumeStore before anything runs, and the root's frame rebuilt from it, wired anew here. Its
 * span continues the suspended one's trace.
 */
export async function resumeStart(core: AgentCore, input: unknown, options: ResumeOptions, hub?: EventHub): Promise<RunStart> {
  const given = readResumeOptions(options);
  const snapshot = openSnapshot(core.snapshots, input, core.name);
  const run = snapshot.run;
  const data = placedData(run);
  checkRoster(core, run);
  // Unchecked snapshots bind an approval to its input only through the digest the decision carries.
  const decisions = checkDecisions(run, given.decisions, { digestsRequired: !isChecked(core.snapshots) });
  checkGivenAgain(core.name, snapshot, given, core.ledger !== undefined);
  // Last of the checks: a resume refused by any of them has not used the snapshot up.
  const claiming = claimSnapshot(core.snapshots, snapshot, core.name);
  if (claiming !== undefined) await claiming;
  // Its signal, listener and question handler were checked by readResumeOptions with run options' rules: not read a second time as run options.
  if (hub !== undefined && given.onEvent !== undefined) hub.listen(given.onEvent);
  const events = hub ?? listenerSink(core, given);
  // The same root: its events number on after the last one delivered before the pause.
  if (snapshot.seq !== undefined && events instanceof EventHub) events.continueFrom(snapshot.seq);
  const owned = rootSignal(given.signal, run.deadline, hub !== undefined);
  const traceContext = run.span === undefined ? otelContext.active() : trace.setSpanContext(otelContext.active(), { traceId: run.span.traceId, spanId: run.span.spanId, traceFlags: run.span.flags, isRemote: true });
  const frame = frameFromData(data, { signal: owned.signal, traceContext, askUser: given.askUser, events });
  const session = data.parentRunId === null ? rootMemory(core.sessions, frame.scope, core.name) : undefined;
  return { frame, ledger: given.accounting, outputType: given.outputType, owned, history: undefined, door: false, wrapped: undefined, resume: { run, decisions }, session };
}

import { context as otelContext } from '@opentelemetry/api';
import type { ZodType } from 'zod';
import { takeHandOff, type HandOff } from '../core/frame-handoff.js';
import { newRunId } from '../core/ids.js';
import { TeeSink } from '../core/run-event.js';
import { freezeFrame, type RunFrame } from '../core/run-frame.js';
import type { Accounting } from '../accounting/accounting.js';
import type { AgentCore } from './agent-core.js';
import { EventHub } from './run-events.js';
import type { RunRequest } from './run-options.js';

/** Where a run stands before it starts: its frame, the ledger it accounts in, and the hand-off it took. */
export interface RunPlacement {
  readonly frame: RunFrame;
  readonly accounting: Accounting;
  readonly handOff: HandOff | undefined;
  /** The output schema: the run's own, else the one its delegator asked for. */
  readonly outputType: ZodType | undefined;
}

/**
 * Places a run. A run that starts inside a delegation takes the frame the delegator derived for
 * it, whatever lineage or scope its caller passed (a wrapper child cannot drop or swap the
 * tenant); its signal joins the frame's. Any other run is a root, or a child placed by hand, from
 * its validated options.
 */
export function placeRun(core: AgentCore, request: RunRequest, given?: HandOff): RunPlacement {
  if (given !== undefined) given.taken = true;
  const handOff = given ?? takeHandOff();
  if (handOff !== undefined) {
    const given = request.signal;
    let frame = given === undefined || given === handOff.frame.signal ? handOff.frame : freezeFrame({ ...handOff.frame, signal: joinSignals(handOff.frame.signal, given) });
    // A child with listeners of its own (its own stream, an onEvent) is heard by them from here
    // down, and by the tree above as well when someone listens there.
    if (request.events !== undefined || request.onEvent !== undefined) {
      const own = eventSink(core, request);
      frame = freezeFrame({ ...frame, events: frame.events === undefined ? own : new TeeSink(frame.events, own) });
    }
    const accounting = core.accounting ?? (handOff.accounting as Accounting | undefined) ?? request.accounting ?? core.privateAccounting();
    return { frame, accounting, handOff, outputType: request.outputType ?? handOff.outputType };
  }
  const runId = request.runId ?? newRunId();
  const frame = freezeFrame({
    runId,
    rootRunId: request.rootRunId ?? runId,
    parentRunId: request.parentRunId,
    depth: request.agentDepth,
    maxDepth: request.maxAgentDepth,
    scope: request.scope,
    signal: request.deadline === undefined ? request.signal : withDeadline(request.signal, request.deadline),
    traceContext: request.parentContext ?? otelContext.active(),
    deadline: request.deadline,
    askUser: request.askUser,
    events: request.events === undefined && request.onEvent === undefined ? undefined : eventSink(core, request),
  });
  return { frame, accounting: core.accounting ?? request.accounting ?? core.privateAccounting(), handOff: undefined, outputType: request.outputType };
}

/** The tree's sink: the stream's own (which already holds any onEvent), or one for the onEvent callback alone. */
function eventSink(core: AgentCore, request: RunRequest): EventHub {
  if (request.events !== undefined) return request.events;
  const hub = new EventHub(listenerErrorReporter(core));
  hub.listen(request.onEvent!);
  return hub;
}

/** Logs an onEvent callback's throws: the first with its error, then at each power of ten, so a callback failing on every delta cannot flood the log. */
export function listenerErrorReporter(core: AgentCore): (error: unknown, count: number) => void {
  return (error, count) => {
    if (Math.log10(count) % 1 === 0) core.logger.warn({ err: error, listener_errors: count }, 'an onEvent callback threw; the run goes on');
  };
}

/** The caller's signal, joined with one that aborts at `deadline` (a TimeoutError, as fetch's). */
function withDeadline(given: AbortSignal | undefined, deadline: number): AbortSignal | undefined {
  const left = deadline - Date.now();
  // Past already: the run must not start its work. Beyond a timer's reach (about 24.8 days): no timer.
  const timeout = left <= 0 ? AbortSignal.abort(new DOMException('the deadline has passed', 'TimeoutError')) : left > MAX_TIMER_MS ? undefined : AbortSignal.timeout(left);
  if (timeout === undefined) return given;
  return given === undefined ? timeout : AbortSignal.any([given, timeout]);
}

/** The longest delay Node's timers keep (2^31 − 1 ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

function joinSignals(a: AbortSignal | undefined, b: AbortSignal): AbortSignal {
  return a === undefined ? b : AbortSignal.any([a, b]);
}

import { abortErrorFrom, isAbortError } from '../core/errors.js';
import type { RunFrame } from '../run/run-frame.js';
import { RunFailure } from '../run/run-outcome.js';
import { callSignal, type CallSignal } from '../core/signals.js';
import { AnswerTooLargeError } from './http-client.js';
import { outgoingHeaders } from './outgoing-headers.js';
import { remoteOutcome, RemoteFailed, type RemoteAnswer } from './remote-answer.js';
import { pausedInTree, remoteDecisions, RemotePaused, type RemoteResume } from './remote-pause.js';
import { TASK_STATE } from './wire.js';
import type { Connected } from './remote-card.js';
import { contextIdFor } from './conversation-context.js';
import { RemoteAgentError } from './remote-error.js';
import { RemoteEvents, type RemoteEventLimits } from './remote-events.js';
import type { RemoteChildResponse } from './remote-response.js';
import { RemoteSpan } from './remote-span.js';
import { RemoteTaskReader } from './remote-task.js';
import { TransportError } from './transport.js';
import { absorbedUsage, type AbsorbedUsage } from './usage-report.js';
import { modelVisibleText } from '../core/redact.js';


/** How long a cancel may take before the call stops waiting to hear what the remote spent. */
const CANCEL_WAIT_MS = 5_000;

/** What every call of one remote child shares. */
export interface CallSettings {
  name: string;
  /** The caller's headers, lower-cased. */
  headers: Readonly<Record<string, string>>;
  timeoutMs: number;
  /** Send lineage baggage: true always, false never, undefined when the card declares the extension. */
  lineage: boolean | undefined;
  /** How much of the served tree's run events one call may add to the caller's. */
  remoteEvents: Readonly<RemoteEventLimits>;
  /** memory 'session': the call goes in the context of the caller's session (conversation-context.ts). */
  remembers: boolean;
}

/** The error the delegation layer reads for a call the caller stopped: its abort, or this call's own timeout. */
function stopError(name: string, frame: RunFrame, timeoutMs: number): Error {
  if (frame.signal?.aborted) return abortErrorFrom(frame.signal, `remote agent "${name}"`);
  return Object.assign(new RemoteAgentError(name, `no answer within ${timeoutMs} ms; the remote task was cancelled`), { name: 'TimeoutError' });
}

function failedError(name: string, error: unknown): Error {
  if (error instanceof RemoteAgentError) return error;
  if (error instanceof TransportError) return new RemoteAgentError(name, error.message, { cause: error, ...(error.status !== undefined ? { status: error.status } : {}) });
  if (error instanceof AnswerTooLargeError) return new RemoteAgentError(name, error.message, { cause: error });
  return new RemoteAgentError(name, modelVisibleText(error instanceof Error ? error.message : String(error)), { cause: error });
}

/** Cancels the call's task and reads what it spent; a cancel that fails or takes too long leaves the reader as it was. */
async function cancelQuietly(connected: Connected, reader: RemoteTaskReader, contextId: string, headers: Readonly<Record<string, string>>): Promise<void> {
  try {
    await connected.transport.cancel(reader, contextId, headers, AbortSignal.timeout(CANCEL_WAIT_MS));
  } catch {
    // The remote's spend is then estimated: better a guess than a cancel that hangs its caller.
  }
}

/**
 * One delegated task to a remote agent, in `frame` (the child run the delegation minted): the
 * CLIENT span, the headers, streamed events into the caller's tree when someone listens, and on
 * an abort or a timeout a CancelTask to the remote. A failure after the remote had the request
 * rejects as a RunFailure carrying its spend (reported, else estimated from what crossed the
 * wire); a call the remote refused at the door spent nothing and rejects as its error.
 */
export async function callRemote(connected: Connected, s: CallSettings, task: string, frame: RunFrame, resume?: RemoteResume): Promise<RemoteChildResponse | RemotePaused> {
  // The call's own stop: the frame's signal (the parent's abort, its child timeout) or this call's
  // timeout. One timer and one follower on the frame's signal, and no AbortSignal unless a transport asks for one.
  const stop = callSignal(frame.signal, s.timeoutMs, () => new DOMException(`no answer within ${s.timeoutMs} ms`, 'TimeoutError'));
  try {
    return await call(connected, s, task, frame, stop, resume);
  } finally {
    stop.dispose();
  }
}

/**
 * What a task in input-required means here: the caller's tree suspends with its interruptions,
 * unless this run cannot wait (below a wrapped child), or the remote did not say what it waits
 * on; then the task is cancelled and the call fails saying why.
 */
async function pausedOutcome(connected: Connected, s: CallSettings, frame: RunFrame, reader: RemoteTaskReader, headers: Readonly<Record<string, string>>, spend: AbsorbedUsage): Promise<RemotePaused | RemoteFailed> {
  const paused = frame.resumable ? pausedInTree(s.name, frame, reader, spend, contextIdFor(s.name, frame, s.remembers)) : undefined;
  if (paused !== undefined) return paused;
  const why = frame.resumable
    ? 'the remote task asks for input without saying what it waits on (a data part { "interruptions": [...] } in its status message)'
    : `the remote task waits for a person (${reader.interruptions?.map((i) => `${i.kind} ${i.tool ?? ''}`.trim()).join(', ') ?? 'input'}), and this run cannot wait for one: it runs inside a wrapped child (code of your own around the agent), which cannot be resumed`;
  await cancelQuietly(connected, reader, contextIdFor(s.name, frame, s.remembers), headers);
  return new RemoteFailed(new RemoteAgentError(s.name, `${why}. The remote task was cancelled.`), absorbedUsage(reader.usage, '', reader.statusText));
}

async function call(connected: Connected, s: CallSettings, task: string, frame: RunFrame, signal: CallSignal, resume: RemoteResume | undefined): Promise<RemoteChildResponse | RemotePaused> {
  const span = new RemoteSpan(s.name, connected.server, frame.traceContext);
  const lineage = s.lineage ?? connected.extension;
  const events = frame.events !== undefined && lineage && connected.transport.streaming ? new RemoteEvents(frame.events, frame, s.remoteEvents, (why) => span.eventsLimited(why)) : undefined;
  const reader = new RemoteTaskReader(events?.take);
  // The child run's id is unique to this call: it names the context it is sent in, unless the
  // child remembers its part of the caller's session, whose context every turn shares.
  const contextId = contextIdFor(s.name, frame, s.remembers);
  const headers = { ...s.headers, ...outgoingHeaders(frame, span.context, lineage, s.timeoutMs) };
  let dispatched = false;
  let failure: unknown;
  try {
    const toTask = resume === undefined ? undefined : { taskId: resume.wait.taskId, decisions: remoteDecisions(resume.wait, resume.decisions) };
    await connected.transport.send({ task, contextId, messageId: frame.runId, headers, signal, events: events !== undefined, onDispatched: () => (dispatched = true), resume: toTask }, reader);
  } catch (error) {
    failure = error;
  }
  let outcome: RemoteAnswer | RemoteFailed | RemotePaused;
  const spend = (): AbsorbedUsage | undefined => (dispatched ? absorbedUsage(reader.usage, task, reader.text) : undefined);
  if (signal.aborted && !reader.done) {
    if (dispatched) await cancelQuietly(connected, reader, contextId, headers);
    outcome = new RemoteFailed(stopError(s.name, frame, s.timeoutMs), spend());
  } else if (failure !== undefined) {
    // Refused at the door (a status) or never sent: no work happened. Broken off after that: it may have.
    const refused = failure instanceof TransportError && failure.status !== undefined;
    outcome = new RemoteFailed(isAbortError(failure) ? stopError(s.name, frame, s.timeoutMs) : failedError(s.name, failure), refused ? undefined : spend());
  } else if (reader.state === TASK_STATE.INPUT_REQUIRED) {
    outcome = await pausedOutcome(connected, s, frame, reader, headers, absorbedUsage(reader.usage, task, reader.statusText));
  } else {
    outcome = remoteOutcome(s.name, task, reader);
  }
  span.taskId(reader.taskId);
  events?.close(outcome instanceof RemoteFailed ? outcome.error.message : 'the remote stream ended');
  span.end(outcome.spend?.totalUsage, outcome instanceof RemoteFailed ? outcome.error : undefined);
  if (outcome instanceof RemotePaused) return outcome;
  if (outcome instanceof RemoteFailed) {
    const spent = outcome.spend;
    // Work happened: the error carries what it cost, under the run id this side gave the child.
    if (spent !== undefined) throw new RunFailure(outcome.error, { runId: frame.runId, totalUsage: spent.totalUsage, totalCostUsd: spent.totalCostUsd, accounting: spent.receipt });
    throw outcome.error;
  }
  const response: RemoteChildResponse = { finalResponse: outcome.text, totalUsage: outcome.spend.totalUsage, totalCostUsd: outcome.spend.totalCostUsd };
  if (outcome.spend.receipt !== undefined) response.accounting = outcome.spend.receipt;
  if (outcome.spend.runId !== undefined) response.runId = outcome.spend.runId;
  return response;
}

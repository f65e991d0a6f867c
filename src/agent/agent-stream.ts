import { AbortError, ConfigurationError } from '../core/errors.js';
import type { AgentResponse } from './agent-response.js';
import type { EventConsumer, EventHub, RunEvent, TextGap } from './run-events.js';

/** Text deltas a stream holds for a consumer that is behind, by count and by characters; past either, deltas are dropped. */
export const STREAM_BUFFER = Object.freeze({ maxDeltas: 1024, maxChars: 1 << 20 });

type Gap = RunEvent & TextGap;

/**
 * A run's events as they happen, for its whole tree: `for await (const e of agent.stream(q))`.
 * `result` settles as `agent.run()` would (resolves with the AgentResponse, rejects with the
 * run's error); the iteration ends after the root's `run.finished` or `run.failed` once every run
 * of the tree has ended. A run that could not start at all (bad options) has no events: the
 * iteration throws its error.
 *
 * Leaving the loop early (`break`, `return()`, `throw()`) aborts the run and its descendants,
 * and `return()` resolves once they have all ended, so spans, ledger entries and reservations are
 * closed by the time the loop is left.
 *
 * Backpressure: the run never waits for the consumer. Structural events (everything but
 * `text.delta`) are always kept; their number is bounded by the work the tree does (turns,
 * tools, children), not by the text it streams. Text deltas are kept while fewer than
 * STREAM_BUFFER.maxDeltas deltas and maxChars characters are waiting; past that they are
 * dropped, and a `text.gap` event (per run, at the place of the first dropped delta, with its
 * seq) counts how many deltas and characters were lost. A consumer that stops reading therefore
 * holds a bounded buffer, and the run, its budget reservations and other tenants' runs go on.
 * The full text of every model turn is still in the result's messages.
 */
export interface AgentStream<T = unknown> extends AsyncIterable<RunEvent> {
  readonly result: Promise<AgentResponse<T>>;
  /** Text deltas dropped so far because the consumer was behind, and their characters. */
  readonly dropped: { readonly deltas: number; readonly chars: number };
  /** Events waiting to be read. */
  readonly buffered: number;
  /** Times an onEvent listener threw (each reported, none failing the run). */
  readonly listenerErrors: number;
}

/** The stream `SymfonicAgent.stream()` makes; callers see it as an `AgentStream`. */
export class RunEventStream implements AgentStream, EventConsumer {
  readonly result: Promise<AgentResponse>;
  /** Text deltas dropped so far because the consumer was behind, and their characters. */
  readonly dropped = { deltas: 0, chars: 0 };

  readonly #hub: EventHub;
  readonly #abort: (reason: unknown) => void;
  readonly #queue: RunEvent[] = [];
  #head = 0;
  #bufferedDeltas = 0;
  #bufferedChars = 0;
  /** Each run's open text.gap; made on the first drop, as most streams never drop. */
  #gaps: Map<string, Gap> | undefined;
  // A reader waiting for the next event; there is one only while the queue is empty.
  #resolve: ((r: IteratorResult<RunEvent>) => void) | undefined;
  #reject: ((e: unknown) => void) | undefined;
  #closed = false;
  #failure: unknown = undefined;
  #iterating = false;
  #settled = false;

  /** `start` begins the run with the hub, and says how to abort it (a run that could not start has nothing to abort). */
  constructor(hub: EventHub, start: () => { result: Promise<AgentResponse>; abort(reason: unknown): void }) {
    this.#hub = hub;
    hub.attach(this);
    let started: { result: Promise<AgentResponse>; abort(reason: unknown): void };
    try {
      started = start();
    } catch (error) {
      started = { result: Promise.reject(error), abort() {} };
    }
    this.#abort = started.abort;
    this.result = started.result;
    // The handler for a rejection also marks result handled: the stream reports a failure in its
    // events, and a caller who never awaits result must not have the process crash over it.
    this.result.then(
      () => {
        this.#settled = true;
      },
      (error: unknown) => this.#runSettled(error),
    );
  }

  /** The hub's consumer: every event of the tree, in seq order. */
  push(event: RunEvent): void {
    if (this.#closed) return;
    const resolve = this.#resolve;
    if (resolve !== undefined) {
      this.#resolve = this.#reject = undefined;
      resolve({ value: event, done: false });
      return;
    }
    if (event.type === 'text.delta') {
      if (this.#bufferedDeltas >= STREAM_BUFFER.maxDeltas || this.#bufferedChars + event.delta.length > STREAM_BUFFER.maxChars) {
        this.#drop(event);
        return;
      }
      this.#bufferedDeltas++;
      this.#bufferedChars += event.delta.length;
    } else if (this.#gaps !== undefined) {
      // A later drop of this run's text starts a new gap, after this event, where it happened.
      this.#gaps.delete(event.runId);
    }
    this.#queue.push(event);
  }

  /** The hub's word that the tree has ended: once the queue is read, the iteration ends. */
  quiet(): void {
    if (this.#closed) return;
    this.#closed = true;
    const resolve = this.#resolve;
    if (resolve === undefined) return;
    const reject = this.#reject!;
    this.#resolve = this.#reject = undefined;
    if (this.#failure !== undefined) reject(this.#failure);
    else resolve({ value: undefined, done: true });
  }

  #drop(event: RunEvent & { type: 'text.delta' }): void {
    this.dropped.deltas++;
    this.dropped.chars += event.delta.length;
    const gaps = (this.#gaps ??= new Map());
    const open = gaps.get(event.runId);
    if (open !== undefined) {
      open.droppedDeltas++;
      open.droppedChars += event.delta.length;
      return;
    }
    const { delta: _text, type: _type, ...lineage } = event;
    const gap: Gap = { ...lineage, type: 'text.gap', droppedDeltas: 1, droppedChars: event.delta.length };
    gaps.set(event.runId, gap);
    this.#queue.push(gap);
  }

  #take(): RunEvent {
    const queue = this.#queue;
    const event = queue[this.#head]!;
    if (++this.#head === queue.length) {
      // Read to the end: start the array over rather than let it grow.
      queue.length = 0;
      this.#head = 0;
    } else {
      queue[this.#head - 1] = undefined as unknown as RunEvent;
      if (this.#head > 1024 && this.#head * 2 > queue.length) {
        queue.splice(0, this.#head);
        this.#head = 0;
      }
    }
    if (event.type === 'text.delta') {
      this.#bufferedDeltas--;
      this.#bufferedChars -= event.delta.length;
    } else if (event.type === 'text.gap' && this.#gaps?.get(event.runId) === event) {
      this.#gaps.delete(event.runId);
    }
    return event;
  }

  #runSettled(error: unknown): void {
    this.#settled = true;
    // Without a run.started the run never began: nothing in the events says why, so the iteration throws.
    if (!this.#hub.started) {
      this.#failure = error;
      this.#hub.becomeQuiet();
    }
  }

  /** How many times an onEvent callback of this run threw (each was logged, none failed the run). */
  get listenerErrors(): number {
    return this.#hub.listenerErrors;
  }

  /** Events waiting for the consumer (for tests and diagnostics). */
  get buffered(): number {
    return this.#queue.length - this.#head;
  }

  [Symbol.asyncIterator](): AsyncIterator<RunEvent> {
    if (this.#iterating) throw new ConfigurationError('an AgentStream can be iterated once: keep the events you need, or call agent.stream() again.');
    this.#iterating = true;
    return {
      next: () => this.#next(),
      return: () => this.#stop(),
      throw: async (error?: unknown) => {
        await this.#stop();
        throw error;
      },
    };
  }

  #next(): Promise<IteratorResult<RunEvent>> {
    if (this.#head < this.#queue.length) return Promise.resolve({ value: this.#take(), done: false });
    if (this.#closed) {
      if (this.#failure !== undefined) {
        const failure = this.#failure;
        this.#failure = undefined;
        return Promise.reject(failure);
      }
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** The consumer left: abort whatever still runs, and resolve once the whole tree has ended. */
  async #stop(): Promise<IteratorResult<RunEvent>> {
    this.#closed = true;
    // Nobody reads this stream any more: the hub stops building events for it.
    this.#hub.attach(undefined);
    if (!this.#settled) {
      this.#abort(new AbortError("the run was aborted: its stream's consumer stopped reading"));
    }
    this.#queue.length = 0;
    this.#head = 0;
    this.#gaps = undefined;
    await this.result.then(
      () => undefined,
      () => undefined,
    );
    await this.#hub.quiet();
    return { value: undefined, done: true };
  }
}

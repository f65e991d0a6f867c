/**
 * Promise tools the suites share for proving order and concurrency without timing: deferreds to
 * release work by hand, a barrier only concurrent callers get past, and bounds that turn a hang
 * into a failure naming what never happened.
 */

export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * `promise`, or a rejection naming `what` once `ms` pass. Only a generous upper bound, so a
 * regression fails with a message instead of hanging until the test timeout.
 */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

export interface Barrier {
  /** Resolves once every party has arrived. */
  arrive(): Promise<void>;
  readonly arrived: number;
}

/**
 * A meeting point for `parties` callers: each `arrive()` resolves only once all have arrived. A
 * caller that arrives waits for the rest, so work that runs one at a time never gets past it:
 * only concurrent callers can. Serialised callers would wait forever, so each wait gives up after
 * a generous bound and rejects, naming `label`, instead of hanging the file.
 */
export function barrier(parties: number, label = 'barrier', timeoutMs = 5_000): Barrier {
  const all = deferred();
  let arrived = 0;
  return {
    get arrived() {
      return arrived;
    },
    arrive() {
      arrived += 1;
      if (arrived === parties) all.resolve();
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${label}: only ${arrived} of ${parties} arrived within ${timeoutMs} ms; the callers did not run concurrently`)), timeoutMs);
      });
      return Promise.race([all.promise, bound]).finally(() => clearTimeout(timer));
    },
  };
}

/** Lets other queued work run: `n` macrotask hops, not a timer, so interleavings cost no time. */
export function hop(n = 1): Promise<void> {
  let p = Promise.resolve();
  for (let i = 0; i < n; i++) p = p.then(() => new Promise<void>((r) => setImmediate(r)));
  return p;
}

/** Lets every pending microtask and I/O callback run until `condition` holds; bounded, so a stuck condition fails fast. */
export async function until(condition: () => boolean, what: string, maxTurns = 2000): Promise<void> {
  for (let i = 0; i < maxTurns; i++) {
    if (condition()) return;
    await new Promise<void>((r) => setImmediate(r));
  }
  throw new Error(`gave up waiting for ${what}`);
}

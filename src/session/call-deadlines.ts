/**
 * The deadlines of the session store calls in flight, kept by one timer for the process, not one
 * a call: a store that answers in microseconds (the in-memory store, every call) pays a Set's add
 * and delete, where a timer of its own, or a microtask to arm one, costs it an async resource and
 * the context manager's hooks. The timer holds the process open only while a call is in flight.
 * The clock is `performance.now()`: a test that fakes `Date` moves no store call's deadline.
 */
export interface Deadline {
  readonly at: number;
  readonly expire: () => void;
}

const inFlight = new Set<Deadline>();
let timer: NodeJS.Timeout | undefined;
let timerAt = Infinity;

/** Calls `expire` once `ms` have passed, unless `unwatch` is called first. */
export function watch(ms: number, expire: () => void): Deadline {
  const deadline: Deadline = { at: performance.now() + ms, expire };
  inFlight.add(deadline);
  if (timer === undefined || deadline.at < timerAt) arm(deadline.at);
  else if (inFlight.size === 1) timer.ref();
  return deadline;
}

export function unwatch(deadline: Deadline): void {
  inFlight.delete(deadline);
  if (inFlight.size === 0) timer?.unref();
}

/** The longest delay Node's timers keep: past it setTimeout fires after 1 ms (with a warning), every time it is armed. */
const LONGEST_DELAY_MS = 2 ** 31 - 1;

function arm(at: number): void {
  clearTimeout(timer);
  timerAt = at;
  // A sessionTimeoutMs past the longest delay wakes the sweep early, which re-arms for what is left.
  timer = setTimeout(sweep, Math.min(LONGEST_DELAY_MS, Math.max(0, at - performance.now())));
}

function sweep(): void {
  timer = undefined;
  timerAt = Infinity;
  const now = performance.now();
  let next = Infinity;
  for (const deadline of inFlight) {
    if (deadline.at <= now) {
      inFlight.delete(deadline);
      deadline.expire();
    } else if (deadline.at < next) next = deadline.at;
  }
  if (next !== Infinity) arm(next);
}

/**
 * The deadlines of the session store calls in flight, kept by one timer for the process, not one
 * a call: a store that answers in microseconds (the in-memory store, every call) links and unlinks
 * an entry, where a timer of its own, or a microtask to arm one, costs it an async resource and
 * the context manager's hooks. The timer holds the process open only while a call is in flight.
 * The clock is `performance.now()`: a test that fakes `Date` moves no store call's deadline.
 */
export interface Deadline {
  readonly at: number;
  readonly expire: () => void;
  /** Its neighbours in the list of calls in flight; null at either end, and both once unwatched. */
  prev: Deadline | null;
  next: Deadline | null;
}

/**
 * The calls in flight, a list linked through the deadlines themselves: a call's add and remove
 * touch two neighbours, where a Set first gives each new deadline object an identity hash.
 */
let head: Deadline | null = null;
let inFlight = 0;
let timer: NodeJS.Timeout | undefined;
let timerAt = Infinity;

/** Calls `expire` once `ms` have passed since `from` (now by default), unless `unwatch` is called first. */
export function watch(ms: number, expire: () => void, from: number = performance.now()): Deadline {
  const deadline: Deadline = { at: from + ms, expire, prev: null, next: head };
  if (head !== null) head.prev = deadline;
  head = deadline;
  inFlight++;
  if (timer === undefined || deadline.at < timerAt) arm(deadline.at);
  else if (inFlight === 1) timer.ref();
  return deadline;
}

/** Takes the deadline off the list; a second call (or one after it expired) does nothing. */
export function unwatch(deadline: Deadline): void {
  if (deadline.prev === null && head !== deadline) return;
  if (deadline.prev === null) head = deadline.next;
  else deadline.prev.next = deadline.next;
  if (deadline.next !== null) deadline.next.prev = deadline.prev;
  deadline.prev = deadline.next = null;
  if (--inFlight === 0) timer?.unref();
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
  let soonest = Infinity;
  for (let d = head; d !== null; ) {
    const after = d.next;
    if (d.at <= now) {
      unwatch(d);
      d.expire();
    } else if (d.at < soonest) soonest = d.at;
    d = after;
  }
  // An expire that started a call armed the timer for it already: re-armed only for a sooner deadline.
  if (soonest < timerAt) arm(soonest);
}

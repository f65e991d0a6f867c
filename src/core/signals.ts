import { setMaxListeners } from 'node:events';
import { abortErrorFrom } from './errors.js';
import { OPTION_STOP, SIGNAL_OWNER as OWNER } from './symbols.js';

/**
 * Every way a run stops early, in one place: a signal that never aborts, the signal a root or a
 * child owns (a caller's signal, a deadline, a child's time limit), and the race of a wait
 * against a signal. A run suspended or ended leaves nothing here behind: every timer is cleared
 * and every listener removed by `dispose`.
 */

/**
 * A signal that never aborts, shared by every run given none: tools always get a signal, and a
 * run without one pays for no controller and no listeners.
 */
export const NEVER_ABORTS: AbortSignal = new AbortController().signal;
// Providers, tools and queued delegations of every unsignalled run in the process listen on this
// one signal and remove their listeners when done; past ten at once Node would print a
// "possible memory leak" warning about a signal that can never fire.
setMaxListeners(0, NEVER_ABORTS);

/** The signal a run (or a child) listens on, and how to let go of what it holds. */
export interface OwnedSignal {
  readonly signal: AbortSignal;
  /**
   * What the runtime checks and races the run on: the signal itself, or the LinkedSignal that
   * owns it, which says it has aborted without making one (see LinkedSignal.signal).
   */
  readonly stop: Stop;
  /** True once the time limit (deadline or child timeout) fired. */
  readonly timedOut: boolean;
  /** Aborts the signal (a stream whose consumer left); a no-op on a signal this handle does not own. */
  abort(reason: unknown): void;
  /** Removes the listener on the parent and clears the timer. Idempotent. */
  dispose(): void;
}

/**
 * A stop for work that listens rather than passes a signal on: it says whether it has fired and
 * tells its followers, and makes an AbortSignal only for a reader of `signal`.
 */
export interface CallSignal {
  readonly aborted: boolean;
  /** Why it fired (undefined until it does). */
  readonly reason: unknown;
  /** An AbortSignal that aborts with it, for code that takes one. */
  readonly signal: AbortSignal;
}

/** A stop the runtime checks (`aborted`, `reason`), races (raceAbort, whenAborted) and hands on as an AbortSignal only when asked (signalOption). */
export type Stop = AbortSignal | CallSignal;

const FREE: OwnedSignal = Object.freeze({ signal: NEVER_ABORTS, stop: NEVER_ABORTS, timedOut: false, abort() {}, dispose() {} });

/** The longest delay Node's timers keep (2^31 − 1 ms): a limit further off sets no timer. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The signals symfonic owns, each with the LinkedSignal that alone can abort it. Waits raced
 * against one, and child signals following it, are told by the LinkedSignal as it aborts: an
 * EventTarget listener costs an object, an options read and a list walk to add and to remove,
 * and a run races its signal at every model call, tool and child. The owner is a property of the
 * signal rather than a WeakMap entry, which would be an ephemeron every collection traces.
 */
type Owned = AbortSignal & { [OWNER]?: LinkedSignal };

/** Calls `onAbort` once when `signal` aborts (a signal of symfonic's own tells it directly; any other through a listener). */
function follow(signal: AbortSignal | LinkedSignal, onAbort: () => void): void {
  const owner = signal instanceof LinkedSignal ? signal : (signal as Owned)[OWNER];
  if (owner !== undefined) owner.follow(onAbort);
  else (signal as AbortSignal).addEventListener('abort', onAbort, { once: true });
}

function unfollow(signal: AbortSignal | LinkedSignal, onAbort: () => void): void {
  const owner = signal instanceof LinkedSignal ? signal : (signal as Owned)[OWNER];
  if (owner !== undefined) owner.unfollow(onAbort);
  else (signal as AbortSignal).removeEventListener('abort', onAbort);
}

/**
 * A signal of symfonic's own that follows `parent` and fires at `after` ms from now. One
 * follower on the parent (a caller's signal is not ours to load with one listener per wait), one
 * timer, both gone on dispose.
 */
class LinkedSignal implements OwnedSignal, CallSignal {
  /** Made when `signal` is first read: an AbortSignal costs 10 µs or more to make on Node 20, and a call that only races on this object never needs one. */
  private controller: AbortController | undefined;
  private abortedWith: { reason: unknown } | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private forward: (() => void) | undefined;
  private capLifted = false;
  /** Told once, after the signal's own listeners, when it aborts: races and child signals (see follow). Made on the first. */
  private followers: Set<() => void> | undefined;
  timedOut = false;

  constructor(
    private readonly parent: AbortSignal | undefined,
    after: number | undefined,
    timeoutReason: () => Error,
  ) {
    if (parent !== undefined && parent !== NEVER_ABORTS) {
      if (parent.aborted) this.abort(parent.reason);
      else follow(parent, (this.forward = () => this.abort(parent.reason)));
    }
    if (after !== undefined && this.abortedWith === undefined) {
      if (after <= 0) this.fire(timeoutReason);
      else if (after <= MAX_TIMER_MS) this.timer = setTimeout(() => this.fire(timeoutReason), after);
    }
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      const controller = (this.controller = new AbortController());
      (controller.signal as Owned)[OWNER] = this;
      if (this.capLifted) setMaxListeners(0, controller.signal);
      if (this.abortedWith !== undefined) controller.abort(this.abortedWith.reason);
    }
    return this.controller.signal;
  }

  get stop(): Stop {
    return this;
  }

  get aborted(): boolean {
    return this.abortedWith !== undefined;
  }

  /** The reason as the AbortSignal gives it (an abort without one reads as an AbortError). */
  get reason(): unknown {
    return this.abortedWith === undefined ? undefined : this.signal.reason;
  }

  /**
   * Every wait of a run is raced here, and each may bring a provider's or a tool's own listeners:
   * once two are in flight at once (tools, children, a fan-out), Node's "possible leak" warning at
   * eleven listeners is lifted. A run with one wait at a time (a leaf's model call) pays nothing for it.
   */
  follow(onAbort: () => void): void {
    const followers = (this.followers ??= new Set());
    followers.add(onAbort);
    if (!this.capLifted && followers.size > 1) {
      this.capLifted = true;
      if (this.controller !== undefined) setMaxListeners(0, this.controller.signal);
    }
  }

  private fire(reason: () => Error): void {
    this.timedOut = true;
    this.abort(reason());
  }

  abort(reason: unknown): void {
    if (this.abortedWith !== undefined) return;
    this.abortedWith = { reason };
    this.controller?.abort(reason);
    if (this.followers === undefined) return;
    const followers = [...this.followers];
    this.followers = undefined;
    for (const f of followers) f();
  }

  unfollow(onAbort: () => void): void {
    this.followers?.delete(onAbort);
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.forward !== undefined) unfollow(this.parent!, this.forward);
    this.forward = undefined;
  }
}

const deadlineReason = () => new DOMException('the deadline has passed', 'TimeoutError');

/**
 * A root run's signal: the caller's, joined with its deadline (epoch ms). A run with neither
 * shares NEVER_ABORTS; `abortable` asks for a signal of its own even then (a stream aborts its
 * run when its consumer leaves).
 */
export function rootSignal(given: AbortSignal | undefined, deadline: number | undefined, abortable = false): OwnedSignal {
  if ((given === undefined || given === NEVER_ABORTS) && deadline === undefined && !abortable) return FREE;
  return new LinkedSignal(given, deadline === undefined ? undefined : deadline - Date.now(), deadlineReason);
}

/**
 * A child's signal: its delegator's run signal, plus a timer at the child's own limit, read from
 * the one deadline its frame and its delegator read too. Without a limit the child shares its
 * delegator's signal, which is already symfonic's own: no controller a hop.
 */
export function childSignal(parent: AbortSignal, deadline: { readonly limitAt: number | undefined; readonly limitMs: number | undefined }): OwnedSignal {
  const { limitAt, limitMs } = deadline;
  if (limitAt === undefined) return parent === NEVER_ABORTS ? FREE : { signal: parent, stop: parent, timedOut: false, abort() {}, dispose() {} };
  return new LinkedSignal(parent, limitAt - Date.now(), () => {
    const reason = new Error(`the sub-agent did not finish within ${limitMs} ms`);
    reason.name = 'TimeoutError';
    return reason;
  });
}

/**
 * A call's stop: it follows `parent` and fires at `timeoutMs` with `reason()`. Its AbortSignal is
 * made only if someone reads `signal`; `whenAborted` listens without one.
 */
export function callSignal(parent: AbortSignal | undefined, timeoutMs: number, reason: () => Error): OwnedSignal & CallSignal {
  return new LinkedSignal(parent, timeoutMs, reason);
}

/** What to follow for `stop`: itself when it is an AbortSignal or symfonic's own, else the AbortSignal it makes. */
function followed(stop: Stop): AbortSignal | LinkedSignal {
  return stop instanceof LinkedSignal || stop instanceof AbortSignal ? stop : stop.signal;
}

/**
 * The `{ signal }` a provider or a tool is called with. A LinkedSignal's AbortSignal is made on
 * the first read of `signal` (a provider that never reads it pays nothing); one made after the
 * stop fired is already aborted, with the same reason.
 */
export function signalOption(stop: Stop): { readonly signal: AbortSignal } {
  if (stop instanceof AbortSignal) return { signal: stop };
  // One getter shared by every call: a getter written in a literal is a closure and an object
  // shape of its own each time (328 against 108 ns a call on Node 20 and 24). Own and
  // enumerable, so a provider that spreads its options keeps the signal.
  const option: { [OPTION_STOP]: CallSignal } = { [OPTION_STOP]: stop };
  return Object.defineProperty(option, 'signal', { get: optionSignal, enumerable: true }) as unknown as { readonly signal: AbortSignal };
}

function optionSignal(this: { [OPTION_STOP]: CallSignal }): AbortSignal {
  return this[OPTION_STOP].signal;
}

/** Calls `onAbort` once when `signal` aborts; returns how to stop listening. */
export function whenAborted(signal: Stop, onAbort: () => void): () => void {
  const target = followed(signal);
  follow(target, onAbort);
  return () => unfollow(target, onAbort);
}

/**
 * Settles with `promise`, or rejects as soon as `signal` aborts, whichever comes first. For work
 * that may ignore its signal (a provider, a tool, a child): the caller stops waiting at once,
 * and a late rejection of the abandoned promise is swallowed rather than left unhandled.
 */
export function raceAbort<T>(promise: Promise<T>, signal: Stop, what: string): Promise<T> {
  if (signal === NEVER_ABORTS) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(abortErrorFrom(signal, what));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => undefined);
      reject(abortErrorFrom(signal, what));
    };
    const target = followed(signal);
    follow(target, onAbort);
    promise.then(
      (v) => {
        unfollow(target, onAbort);
        resolve(v);
      },
      (e) => {
        unfollow(target, onAbort);
        reject(e);
      },
    );
  });
}

/** A pause that an abort cuts short, rejecting with an AbortError. */
export function abortableSleep(ms: number, signal?: AbortSignal, what = 'the model call'): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortErrorFrom(signal, what));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortErrorFrom(signal!, what));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

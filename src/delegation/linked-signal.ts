import { markInternal, NEVER_ABORTS } from '../core/abort.js';

/**
 * A child's abort signal: aborts when the parent's does, or when the child's time runs out.
 * Built by hand rather than with AbortSignal.any, whose Node 20 implementation keeps dependent
 * signals reachable from a long-lived parent; `dispose` unhooks everything once the child is done.
 */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  readonly timedOut: boolean;
  dispose(): void;
}

// A child nothing can abort gets the shared never-aborting signal: no controller to make, and
// every wait in the child (and the delegator's race on it) skips its abort listener.
const UNLINKED: LinkedSignal = Object.freeze({ signal: NEVER_ABORTS, timedOut: false, dispose() {} });

export function linkedSignal(parent: AbortSignal | undefined, timeoutMs: number | undefined): LinkedSignal {
  if ((parent === undefined || parent === NEVER_ABORTS) && timeoutMs === undefined) return UNLINKED;
  const controller = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const onParentAbort = () => controller.abort(parent!.reason);
  // The never-aborting signal is shared by every unsignalled run in the process: listening on it
  // would pile up one listener per concurrent delegation (and Node's leak warning) for nothing.
  if (parent && parent !== NEVER_ABORTS) {
    if (parent.aborted) controller.abort(parent.reason);
    else parent.addEventListener('abort', onParentAbort, { once: true });
  }
  if (timeoutMs !== undefined && !controller.signal.aborted) {
    timer = setTimeout(() => {
      timedOut = true;
      const reason = new Error(`the sub-agent did not finish within ${timeoutMs} ms`);
      reason.name = 'TimeoutError';
      controller.abort(reason);
    }, timeoutMs);
  }
  return {
    signal: markInternal(controller.signal),
    get timedOut() {
      return timedOut;
    },
    dispose() {
      if (timer) clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}

/**
 * One HTTP attempt's signal, and waiting on a promise under it: the caller's abort and the
 * attempt's timeout in one controller, so that nothing a server or a custom fetch does can hold
 * an aborted or timed-out call open.
 */

/**
 * One attempt's signal: the caller's abort and this attempt's timeout in one controller, so the
 * timer is cleared as soon as the attempt ends instead of outliving it.
 */
export class Attempt {
  readonly signal: AbortSignal;
  timedOut = false;
  private readonly controller = new AbortController();
  private readonly timer: ReturnType<typeof setTimeout>;
  private readonly forwardAbort: () => void;

  constructor(
    readonly timeoutMs: number,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    this.signal = this.controller.signal;
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(new DOMException(`no response within ${timeoutMs}ms`, 'TimeoutError'));
    }, timeoutMs);
    this.forwardAbort = () => this.controller.abort(callerSignal?.reason);
    callerSignal?.addEventListener('abort', this.forwardAbort, { once: true });
  }

  /** Whether the caller, not the timeout, stopped this attempt. */
  get callerAborted(): boolean {
    return this.callerSignal?.aborted === true;
  }

  end(): void {
    clearTimeout(this.timer);
    this.callerSignal?.removeEventListener('abort', this.forwardAbort);
  }
}

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as it aborts: a custom fetch
 * that ignores its signal must not be able to hold an aborted run open.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => undefined);
      reject(signal.reason);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

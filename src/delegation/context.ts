/** One run's delegations: the children it started, and its slots for concurrent ones. */
interface RunDelegations {
  /** Made with the first child: most runs start none, or one. */
  started: string[] | undefined;
  active: number;
  /** Made when a call first has to queue: most runs never wait for a slot. */
  waiting: (() => void)[] | undefined;
}

/**
 * Per-run delegation state, keyed by the delegating run's id. Keyed per run rather than per
 * agent because one agent instance serves concurrent runs, and each run's `delegatedTo` must hold
 * only its own children.
 */
export class DelegationContext {
  private readonly runs = new Map<string, RunDelegations>();

  private state(runId: string): RunDelegations {
    let s = this.runs.get(runId);
    if (!s) {
      s = { started: undefined, active: 0, waiting: undefined };
      this.runs.set(runId, s);
    }
    return s;
  }

  /** Records that `runId` started child `name`. */
  recordStart(runId: string, name: string): void {
    const s = this.state(runId);
    if (s.started === undefined) s.started = [name];
    else s.started.push(name);
  }

  /** The children `runId` started so far, in order. */
  delegatedTo(runId: string): readonly string[] {
    return this.runs.get(runId)?.started ?? EMPTY;
  }

  /** Ends a run's state and returns its delegations; nothing stays behind once a run is over. */
  close(runId: string): readonly string[] {
    const s = this.runs.get(runId);
    if (!s) return EMPTY;
    this.runs.delete(runId);
    return s.started === undefined ? EMPTY : Object.freeze(s.started);
  }

  /** Runs with state held: 0 when no run is mid-delegation. */
  get openRuns(): number {
    return this.runs.size;
  }

  /**
   * Takes one of the run's `limit` delegation slots: at once (the release function) when one is
   * free, else a promise of it. Past the limit calls queue in arrival order, so a model that asks
   * for a hundred children cannot start a hundred at once. The free-slot path returns no promise,
   * because it is every delegation's path and a promise would cost each hop a microtask.
   */
  acquire(runId: string, limit: number, signal: AbortSignal): (() => void) | Promise<() => void> {
    const s = this.state(runId);
    if (s.active < limit) {
      s.active++;
      return releaser(s);
    }
    return new Promise<() => void>((resolve, reject) => {
      const waiting = (s.waiting ??= []);
      const onAbort = () => {
        const i = waiting.indexOf(grant);
        if (i >= 0) waiting.splice(i, 1);
        reject(signal.reason);
      };
      const grant = () => {
        signal.removeEventListener('abort', onAbort);
        resolve(releaser(s));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      waiting.push(grant);
    });
  }

}

const EMPTY: readonly string[] = Object.freeze([]);

/** Gives the slot back once; it passes straight to the next waiter, so `active` drops only when nobody waits. */
function releaser(s: RunDelegations): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const next = s.waiting?.shift();
    if (next) next();
    else s.active--;
  };
}

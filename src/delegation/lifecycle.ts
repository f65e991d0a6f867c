import type { ChildAgent } from './child.js';

/**
 * The children a delegator owns and must close: those it built from specs. Children the caller
 * built are the caller's to close; owning them here would close them twice.
 */
export class ChildLifecycle {
  private closed = false;

  constructor(private readonly owned: readonly ChildAgent[]) {}

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const results = await Promise.allSettled(this.owned.map((c) => c.close?.()));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length > 0) throw new AggregateError(failed.map((f) => f.reason), `${failed.length} sub-agent(s) failed to close`);
  }
}

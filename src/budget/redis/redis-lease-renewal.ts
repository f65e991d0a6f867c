import type { Logger } from '../../observability/logger.js';

/**
 * Keeps the leases of this process's calls in flight alive: every leaseMs / 3, one script per
 * tenant moves each live reservation's lease to leaseMs from the server's now. So a call may run
 * for as long as it runs (a long stream, a slow model) without its reservation lapsing and the
 * fleet passing the limit, while a process that dies stops renewing and its holds end within
 * leaseMs. A lease found lapsed (the process could not reach Redis for longer than leaseMs) is
 * logged and counted: that call's spend is still charged when it settles, but what it held was
 * not reserved for part of its run.
 */
export class LeaseRenewal {
  private readonly live = new Map<string, Set<string>>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly renew: (tenantId: string, ids: string[]) => Promise<string[]>,
    private readonly everyMs: number,
    private readonly log: Logger,
    private readonly onLapsed: (tenantId: string, ids: readonly string[]) => void,
  ) {}

  /** Number of calls in flight whose leases are kept. */
  get size(): number {
    let n = 0;
    for (const ids of this.live.values()) n += ids.size;
    return n;
  }

  add(tenantId: string, id: string): void {
    let ids = this.live.get(tenantId);
    if (ids === undefined) this.live.set(tenantId, (ids = new Set()));
    ids.add(id);
    if (this.timer === undefined) {
      this.timer = setInterval(() => void this.tick(), this.everyMs);
      // Renewal alone never keeps a process alive: a process with nothing else to do has no calls.
      this.timer.unref();
    }
  }

  remove(tenantId: string, id: string): void {
    const ids = this.live.get(tenantId);
    if (ids === undefined || !ids.delete(id)) return;
    // The timer stays until a tick finds nothing to renew: a store serving one call after another
    // would otherwise set and clear an interval per call.
    if (ids.size === 0) this.live.delete(tenantId);
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (const [tenantId, ids] of [...this.live]) {
        let lapsed: string[];
        try {
          lapsed = await this.renew(tenantId, [...ids]);
        } catch {
          // Unreachable now: the next tick tries again, and the lease has leaseMs to wait for it.
          continue;
        }
        // A call that settled while the renewal ran is not lapsed: it is done.
        const gone = lapsed.filter((id) => ids.has(id));
        if (gone.length === 0) continue;
        for (const id of gone) ids.delete(id);
        if (ids.size === 0) this.live.delete(tenantId);
        this.log.error({ tenant_id: tenantId, lapsed: gone.length }, 'budget reservations lapsed while their calls ran (Redis was out of reach for longer than leaseMs); their spend is charged when they settle');
        this.onLapsed(tenantId, gone);
      }
    } finally {
      this.running = false;
      if (this.live.size === 0) this.stop();
    }
  }
}

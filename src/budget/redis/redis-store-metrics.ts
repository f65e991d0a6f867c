import { TRACER_NAME } from '../../observability/attributes.js';
import { SYMFONIC_VERSION } from '../../observability/version.js';
import { metrics, type Counter, type Meter, type MeterProvider } from '@opentelemetry/api';

export const STORE_UNAVAILABLE_METRIC = 'symfonic.budget.store_unavailable';
export const STORE_DATA_LOST_METRIC = 'symfonic.budget.store_data_lost';
export const LEASES_LAPSED_METRIC = 'symfonic.budget.leases_lapsed';

interface Counters {
  unavailable: Counter;
  dataLost: Counter;
  lapsed: Counter;
}

/** The Redis store's own counters: outages by operation and outcome, data found lost, leases found lapsed. */
export class RedisStoreMetrics {
  private cachedFor: MeterProvider | Meter | undefined;
  private cached: Counters | undefined;

  constructor(
    private readonly meter: Meter | undefined,
    private readonly store: string,
  ) {}

  unavailable(operation: string, outcome: 'denied' | 'allowed' | 'queued'): void {
    this.get().unavailable.add(1, { 'symfonic.budget.operation': operation, 'symfonic.budget.outcome': outcome });
  }

  dataLost(): void {
    this.get().dataLost.add(1, { 'symfonic.budget.store': this.store });
  }

  lapsed(tenantId: string, n: number): void {
    this.get().lapsed.add(n, { 'symfonic.tenant_id': tenantId });
  }

  private get(): Counters {
    const source = this.meter ?? metrics.getMeterProvider();
    if (this.cachedFor !== source || this.cached === undefined) {
      const meter = this.meter ?? metrics.getMeterProvider().getMeter(TRACER_NAME, SYMFONIC_VERSION);
      this.cached = {
        unavailable: meter.createCounter(STORE_UNAVAILABLE_METRIC, { description: 'Budget store operations that could not reach the store', unit: '{operation}' }),
        dataLost: meter.createCounter(STORE_DATA_LOST_METRIC, { description: 'Times a budget store found the data it knew gone (restart without persistence, FLUSHALL)', unit: '{event}' }),
        lapsed: meter.createCounter(LEASES_LAPSED_METRIC, { description: 'Reservations whose lease lapsed while their call ran', unit: '{reservation}' }),
      };
      this.cachedFor = source;
    }
    return this.cached;
  }
}

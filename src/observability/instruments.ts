import { metrics, type Counter, type Histogram, type Meter, type MeterProvider } from '@opentelemetry/api';
import { METRIC, OPERATION_DURATION_BUCKETS, TOKEN_USAGE_BUCKETS, TRACER_NAME } from './attributes.js';
import { SYMFONIC_VERSION } from './version.js';

export interface Instruments {
  tokenUsage: Histogram;
  operationDuration: Histogram;
  tenantCost: Counter;
  delegations: Counter;
  storeErrors: Counter;
}

function createInstruments(meter: Meter): Instruments {
  return {
    tokenUsage: meter.createHistogram(METRIC.tokenUsage, {
      description: 'Measures number of input and output tokens used',
      unit: '{token}',
      advice: { explicitBucketBoundaries: TOKEN_USAGE_BUCKETS },
    }),
    operationDuration: meter.createHistogram(METRIC.operationDuration, {
      description: 'GenAI operation duration',
      unit: 's',
      advice: { explicitBucketBoundaries: OPERATION_DURATION_BUCKETS },
    }),
    tenantCost: meter.createCounter(METRIC.tenantCost, {
      description: 'LLM spend settled against a tenant',
      unit: 'USD',
    }),
    delegations: meter.createCounter(METRIC.delegations, {
      description: 'run_agent calls by child and outcome',
      unit: '{delegation}',
    }),
    storeErrors: meter.createCounter(METRIC.budgetStoreErrors, {
      description: 'Budget store writes (settle, release, absorbed spend) that failed after a model call answered',
      unit: '{error}',
    }),
  };
}

/**
 * Instruments on the meter a collector was given, or on the global meter provider. The metrics
 * API has no proxy provider (unlike tracing), so instruments made before an SDK registers would
 * stay no-ops forever; resolving against the current global provider on use, and rebuilding only
 * when it changes, keeps a collector made early working once telemetry starts.
 */
export class InstrumentSource {
  private cachedFor: MeterProvider | Meter | undefined;
  private cached: Instruments | undefined;

  constructor(private readonly meter?: Meter) {}

  get(): Instruments {
    if (this.meter) {
      if (this.cachedFor !== this.meter) {
        this.cached = createInstruments(this.meter);
        this.cachedFor = this.meter;
      }
      return this.cached!;
    }
    const provider = metrics.getMeterProvider();
    if (this.cachedFor !== provider) {
      this.cached = createInstruments(provider.getMeter(TRACER_NAME, SYMFONIC_VERSION));
      this.cachedFor = provider;
    }
    return this.cached!;
  }
}

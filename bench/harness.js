// @ts-check
// Shared pieces of the benchmark: the OpenTelemetry SDK the traced cases run on, round timing,
// and the statistics and output format every case reports in.
import { context, metrics, trace } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * @typedef {object} Sdk
 * @property {InMemorySpanExporter} exporter
 * @property {BasicTracerProvider} provider
 * @property {() => void} reset  forgets exported spans, so a long case does not hold every span it made
 * @property {() => Promise<void>} shutdown  flushes and unregisters the globals
 */

/**
 * The stock in-memory exporter acknowledges each export on a timer. A benchmark loop runs on
 * microtasks and never reaches the timers phase, so the batch processor would sit on its first
 * export, fill its queue and drop nine spans in ten, and the figures would leave out the
 * processor's real work. Acknowledging at once lets it batch and export as it does behind an
 * exporter that keeps up.
 */
class PromptInMemorySpanExporter extends InMemorySpanExporter {
  /** @type {InMemorySpanExporter['export']} */
  export(spans, resultCallback) {
    // Stores the spans; its own acknowledgement, due on the timer, goes nowhere.
    super.export(spans, () => undefined);
    resultCallback({ code: ExportResultCode.SUCCESS });
  }
}

/**
 * The real SDK as globals: a batch processor into an in-memory exporter, the async-local-storage
 * context manager, and a meter provider with a reader (an SDK meter with no reader would skip
 * aggregation and flatter the figures). `tracing: false` or `metrics: false` leaves that half
 * unregistered, for the breakdown of where a hop's time goes.
 * @param {{ tracing?: boolean, metrics?: boolean }} [parts]
 * @returns {Sdk}
 */
export function installSdk({ tracing = true, metrics: withMetrics = true } = {}) {
  const exporter = new PromptInMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
  const reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    // Collected by hand, never on a timer: an export mid-round would be noise.
    exportIntervalMillis: 3_600_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const registered =
    (!tracing || (trace.setGlobalTracerProvider(provider) && context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()))) &&
    (!withMetrics || metrics.setGlobalMeterProvider(meterProvider));
  if (!registered) throw new Error('an OpenTelemetry SDK is already registered');
  return {
    exporter,
    provider,
    reset: () => exporter.reset(),
    async shutdown() {
      await provider.forceFlush();
      exporter.reset();
      disableSdk();
      await Promise.allSettled([provider.shutdown(), meterProvider.shutdown()]);
    },
  };
}

/** No SDK at all: the API's no-op tracer, root context and no-op meter. */
export function disableSdk() {
  trace.disable();
  context.disable();
  metrics.disable();
}

/**
 * @param {number[]} values
 * @param {number} q  0..1
 */
export function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  // Nearest-rank: with a handful of rounds, interpolating would invent values no round produced.
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return /** @type {number} */ (sorted[rank]);
}

/**
 * @typedef {{ wall: number, cpu: number }} Timing  microseconds per operation: elapsed, and CPU
 * time of the whole process (user + system, GC threads included). On a busy machine the wall
 * figure counts time other processes held the cores; the CPU figure mostly does not.
 */

/**
 * @param {number} n
 * @param {() => Promise<number>} body  runs the operations, returns elapsed milliseconds
 * @returns {Promise<Timing>}
 */
async function timed(n, body) {
  const cpu0 = process.cpuUsage();
  const ms = await body();
  const cpu = process.cpuUsage(cpu0);
  return { wall: (ms * 1000) / n, cpu: (cpu.user + cpu.system) / n };
}

/**
 * Runs `op` `n` times one after another.
 * @param {number} n
 * @param {() => Promise<unknown>} op
 */
export function timeSequential(n, op) {
  return timed(n, async () => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await op();
    return performance.now() - t0;
  });
}

/**
 * Runs `total` operations in waves of `concurrency` started together, calling `afterWave`
 * between waves; the figures are per operation over the whole span.
 * @param {number} total
 * @param {number} concurrency
 * @param {() => Promise<unknown>} op
 * @param {() => void} [afterWave]
 */
export function timeWaves(total, concurrency, op, afterWave) {
  return timed(total, async () => {
    const t0 = performance.now();
    for (let done = 0; done < total; done += concurrency) {
      const size = Math.min(concurrency, total - done);
      /** @type {Promise<unknown>[]} */
      const wave = new Array(size);
      for (let i = 0; i < size; i++) wave[i] = op();
      await Promise.all(wave);
      afterWave?.();
    }
    return performance.now() - t0;
  });
}

/**
 * @typedef {{ case: string, median_us: number, p90_us: number, rounds: number, n: number, [extra: string]: unknown }} CaseResult
 */

/**
 * @param {string} name
 * @param {Timing[]} perRound  one per-operation timing per measured round
 * @param {number} n  operations per round
 * @param {Record<string, unknown>} [extra]
 * @returns {CaseResult}
 */
export function result(name, perRound, n, extra = {}) {
  const wall = perRound.map((t) => t.wall);
  const cpu = perRound.map((t) => t.cpu);
  const cpuMedian = quantile(cpu, 0.5);
  // A figure that is a difference (the hop) can fall below zero when its parts' noise is larger
  // than it, most often with --quick's short rounds. No work takes negative time: such a figure is
  // reported as null with cpu_noise, never as a negative number.
  const cpuNoise = cpuMedian < 0;
  return {
    case: name,
    median_us: round2(quantile(wall, 0.5)),
    p90_us: round2(quantile(wall, 0.9)),
    rounds: perRound.length,
    n,
    cpu_median_us: cpuNoise ? null : round2(cpuMedian),
    cpu_p90_us: cpuNoise ? null : round2(Math.max(0, quantile(cpu, 0.9))),
    ...(cpuNoise ? { cpu_noise: true } : {}),
    ...extra,
  };
}

/** @param {number} x */
export function round2(x) {
  return Math.round(x * 100) / 100;
}

/** @param {CaseResult} r */
export function emit(r) {
  process.stdout.write(JSON.stringify(r) + '\n');
}

/** @param {CaseResult[]} results */
export function printTable(results) {
  const rows = results.map((r) => [
    r.case + (r.roots !== undefined ? ` (${r.roots} roots)` : ''),
    fmt(r.median_us),
    fmt(r.p90_us),
    r.cpu_noise ? 'noise' : r.cpu_median_us === undefined ? '-' : fmt(/** @type {number} */ (r.cpu_median_us)),
    String(r.rounds),
    String(r.n),
    String(r.note ?? ''),
  ]);
  const head = ['case', 'median µs/op', 'p90 µs/op', 'cpu median', 'rounds', 'n/round', 'note'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (/** @type {string[]} */ cells) => cells.map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  process.stdout.write('\n' + line(head) + '\n' + widths.map((w) => '-'.repeat(w)).join('  ') + '\n');
  for (const row of rows) process.stdout.write(line(row) + '\n');
  process.stdout.write('\n');
}

/** @param {number} x */
function fmt(x) {
  return Number.isFinite(x) ? x.toFixed(1) : String(x);
}

/** Full collections until the heap stops shrinking, so a heap figure is live data, not garbage. */
export async function settleHeap() {
  const gc = /** @type {(() => void) | undefined} */ (globalThis.gc);
  if (!gc) throw new Error('run with node --expose-gc (npm run bench does)');
  // Timers first: the in-memory exporter and the batch processor still hold callbacks on the
  // timer queue after a busy stretch, and what they keep alive is not the runtime's.
  await new Promise((r) => setTimeout(r, 100));
  let last = Infinity;
  for (let i = 0; i < 10; i++) {
    gc();
    // Let finalizers and timers that release memory run between collections.
    await new Promise((r) => setImmediate(r));
    const used = process.memoryUsage().heapUsed;
    if (used >= last - 1024) return used;
    last = used;
  }
  return last;
}

/**
 * The reliability suite's shared rig: one collector, one budget store and one telemetry recording
 * per test, plus `settled()`, the check every scenario ends with. A fault scenario that returns
 * the right error but leaves a ledger entry, a span, a reservation or a delegation slot behind
 * has still failed: in a long-lived server each of those is a leak per bad request.
 */
import { ProxyTracerProvider, trace, type Span, type Tracer, type TracerProvider } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { expect } from 'vitest';
import { DELEGATION_CAPABILITY, DelegationCapability } from '../../src/delegation/delegation-capability.js';
import {
  InMemoryBudgetStore,
  MetricsCollector,
  SymfonicAgent,
  TenantBudgets,
  priceTable,
  type BudgetLimit,
  type ReserveResult,
  type Spend,
  type SymfonicAgentOptions,
} from '../../src/index.js';
import type { ProblemReporter, RunAccount } from '../../src/accounting/accounting.js';
import type { RunFrame } from '../../src/run/run-frame.js';
import { recordTelemetry, type TelemetryRecording } from '../../src/testing/index.js';
import { perTest } from '../support/per-test.js';

/** A store that remembers which tenants ever reserved, so `settled()` knows whom to check. */
export class TrackingStore extends InMemoryBudgetStore {
  readonly tenants = new Set<string>();
  reservations = 0;
  override reserve(tenantId: string, amount: Spend, limit: BudgetLimit, now: number): ReserveResult {
    this.tenants.add(tenantId);
    this.reservations++;
    return super.reserve(tenantId, amount, limit, now);
  }
}

/** A collector that counts the runs it opened, to match against finished invoke_agent spans. */
export class CountingCollector extends MetricsCollector {
  started = 0;
  override open(frame: RunFrame, agentName: string, report?: ProblemReporter): RunAccount {
    const account = super.open(frame, agentName, report);
    this.started++;
    return account;
  }
}

export interface SpanWatch {
  /** Spans started and not yet ended. */
  readonly open: number;
  readonly started: number;
  openNames(): string[];
}

/**
 * Counts spans open right now, by wrapping the tracer the global proxy hands out. The SDK's
 * exporter only sees spans that ended, so it cannot tell "never started" from "never ended";
 * this can. The proxy is replaced when the recording shuts down, which drops the wrapper too.
 */
export function watchSpans(): SpanWatch {
  const proxy = trace.getTracerProvider();
  if (!(proxy instanceof ProxyTracerProvider)) throw new Error('watchSpans: the global tracer provider is not the API proxy');
  const real = proxy.getDelegate();
  const open = new Map<Span, string>();
  let started = 0;
  const wrap = (tracer: Tracer): Tracer => {
    const wrapped: Tracer = {
      startSpan(name, options, ctx) {
        const span = tracer.startSpan(name, options, ctx);
        started++;
        open.set(span, name);
        const end = span.end;
        span.end = function (this: Span, endTime) {
          open.delete(span);
          return end.call(span, endTime);
        };
        return span;
      },
      // The SDK's startActiveSpan calls this.startSpan, so running it on the wrapper tracks it too.
      startActiveSpan: ((...args: unknown[]) => (tracer.startActiveSpan as (...a: unknown[]) => unknown).apply(wrapped, args)) as Tracer['startActiveSpan'],
    };
    return wrapped;
  };
  const provider: TracerProvider = { getTracer: (name, version, options) => wrap(real.getTracer(name, version, options)) };
  proxy.setDelegate(provider);
  return {
    get open() {
      return open.size;
    },
    get started() {
      return started;
    },
    openNames: () => [...open.values()],
  };
}

export interface Rig {
  rec: TelemetryRecording;
  spans: SpanWatch;
  store: TrackingStore;
  collector: CountingCollector;
  agents: SymfonicAgent[];
  /** A SymfonicAgent on the rig's collector, remembered for `settled()`. */
  agent(options: Omit<SymfonicAgentOptions, 'metricsCollector'>): SymfonicAgent;
  /** Everything a run opens is closed: ledger entries, spans, reservations, delegation state. */
  settled(): void;
  shutdown(): Promise<void>;
}

/** Every tenant has a limit far out of reach, so every model call reserves and must settle. */
const UNREACHABLE: BudgetLimit = { maxTokens: 1e12 };

export const PRICES = priceTable({ 'scripted-model': { inputPerMTok: 1, outputPerMTok: 2 } });

export function rig(): Rig {
  const rec = recordTelemetry();
  const spans = watchSpans();
  const store = new TrackingStore();
  const collector = new CountingCollector({ prices: PRICES, budgets: new TenantBudgets({ defaultLimit: UNREACHABLE, store }) });
  const agents: SymfonicAgent[] = [];
  return {
    rec,
    spans,
    store,
    collector,
    agents,
    agent(options) {
      const a = new SymfonicAgent({ ...options, metricsCollector: collector });
      agents.push(a);
      return a;
    },
    settled() {
      assertSettled({ rec, spans, store, collector, agents });
    },
    shutdown: () => rec.shutdown(),
  };
}

/** A fresh rig() per test, shut down after it; the returned rig stands for the current test's. */
export function rigEachTest(): Rig {
  return perTest(rig, (r) => r.shutdown());
}

export function delegationOf(agent: SymfonicAgent): DelegationCapability | undefined {
  const c = agent.capabilities.find((x) => x.name === DELEGATION_CAPABILITY);
  return c instanceof DelegationCapability ? c : undefined;
}

export function assertSettled(r: {
  /** Without a recording (under startTelemetry) the finished-span checks are skipped. */
  rec?: TelemetryRecording;
  spans: SpanWatch;
  store: TrackingStore;
  collector: CountingCollector;
  agents: readonly SymfonicAgent[];
}): void {
  const problems: string[] = [];
  if (r.collector.openRuns !== 0) problems.push(`collector.openRuns is ${r.collector.openRuns}`);
  if (r.spans.open !== 0) problems.push(`${r.spans.open} span(s) never ended: ${r.spans.openNames().join(', ')}`);
  const now = Date.now();
  for (const t of r.store.tenants) {
    const reserved = r.store.usage(t, undefined, now).reserved;
    if (reserved.tokens !== 0 || reserved.costUsd !== 0) problems.push(`tenant ${t} still holds a reservation of ${reserved.tokens} tokens`);
  }
  for (const a of r.agents) {
    const d = delegationOf(a);
    if (d && d.context.openRuns !== 0) problems.push(`agent ${a.name} holds delegation state for ${d.context.openRuns} run(s)`);
  }
  const finished = r.rec?.spans() ?? [];
  const runSpans = finished.filter((s) => s.attributes['gen_ai.operation.name'] === 'invoke_agent');
  if (r.rec && runSpans.length !== r.collector.started) {
    problems.push(`${r.collector.started} run(s) opened a ledger entry but ${runSpans.length} invoke_agent span(s) finished`);
  }
  const ids = new Set(finished.map((s) => s.spanContext().spanId));
  for (const s of finished) {
    const parent = s.parentSpanContext?.spanId;
    if (parent !== undefined && !ids.has(parent)) problems.push(`span "${s.name}" has a parent span that never finished`);
  }
  expect(problems, problems.join('\n')).toEqual([]);
}

// ---------------------------------------------------------------------------------------------
// small tools the scenarios share

export function spansNamed(rec: TelemetryRecording, prefix: string): ReadableSpan[] {
  return rec.spans().filter((s) => s.name.startsWith(prefix));
}

/** The tool messages the model read on its `index`th call. */
export function toolMessages(calls: readonly { messages: { role: string; content: string; toolCallId?: string }[] }[], index: number): string[] {
  const call = calls[index];
  if (!call) throw new Error(`the model was called ${calls.length} time(s), not ${index + 1}`);
  return call.messages.filter((m) => m.role === 'tool').map((m) => m.content);
}

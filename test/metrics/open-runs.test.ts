/**
 * Memory follows runs in flight, not runs served: after ten thousand root runs, finished ones
 * and ones that threw, were aborted or had a child time out, the collector holds no entry and
 * the budget store holds no reservation.
 */
import { describe, expect, it } from 'vitest';
import { FrameworkConfig, MetricsCollector, SubAgentSpec, SymfonicAgent, TenantBudgets, priceTable } from '../../src/index.js';
import { scriptedModel, type ScriptedTurn } from '../../src/testing/index.js';
import { RecordingBudgetStore, taskOf, turnOf, usage } from './helpers.js';

const RUNS = 10_000;
const BATCH = 500;
const KINDS = ['ok', 'model-error', 'aborted-mid-call', 'aborted-before', 'child-timeout', 'child-error'] as const;
type Kind = (typeof KINDS)[number];

describe('openRuns returns to 0', () => {
  it(`after ${RUNS} root runs that finish, throw, abort and time out`, async () => {
    const controllers = new Map<string, AbortController>();
    const model = scriptedModel(
      (request): ScriptedTurn => {
        const task = taskOf(request);
        const turn = turnOf(request);
        const [kind, n] = task.split(':') as [string, string];
        switch (kind) {
          case 'ok':
            return turn === 0 ? { toolCalls: [{ name: 'run_agent', arguments: { name: 'kid', task: `fast:${n}` } }], usage: usage(3, 1) } : { text: 'ok', usage: usage(2, 1) };
          case 'fast':
            return { text: 'kid ok', usage: usage(1, 1) };
          case 'model-error':
            return new Error('provider exploded');
          case 'aborted-mid-call':
            // The caller gives up while the call is in flight; the scripted delay honours the signal.
            controllers.get(task)!.abort();
            return { text: 'never', delayMs: 60_000 };
          case 'child-timeout':
            return turn === 0 ? { toolCalls: [{ name: 'run_agent', arguments: { name: 'kid', task: `slow:${n}` } }], usage: usage(3, 1) } : { text: 'went on without it', usage: usage(2, 1) };
          case 'slow':
            return { text: 'too late', delayMs: 60_000 };
          case 'child-error':
            return turn === 0 ? { toolCalls: [{ name: 'run_agent', arguments: { name: 'kid', task: `boom:${n}` } }], usage: usage(3, 1) } : { text: 'went on without it', usage: usage(2, 1) };
          case 'boom':
            return new Error('kid exploded');
          default:
            throw new Error(`unexpected task ${task}`);
        }
      },
      { modelName: 'm' },
    );
    const store = new RecordingBudgetStore();
    const collector = new MetricsCollector({
      prices: priceTable({ m: { inputPerMTok: 1, outputPerMTok: 1 } }),
      // A limit nobody reaches, so every call reserves and every exit must release or settle.
      budgets: new TenantBudgets({ defaultLimit: { maxTokens: 1_000_000_000 }, store }),
    });
    const agent = new SymfonicAgent({
      name: 'root',
      modelProvider: model,
      metricsCollector: collector,
      config: new FrameworkConfig({ agent: { childTimeoutMs: 5 }, model: { maxTokens: 16 } }),
      subAgents: [new SubAgentSpec({ name: 'kid', description: 'a child' })],
    });

    const seen = new Map<Kind, { ok: number; rejected: Map<string, number>; toolTexts: Set<string> }>();
    for (const k of KINDS) seen.set(k, { ok: 0, rejected: new Map(), toolTexts: new Set() });
    for (let start = 0; start < RUNS; start += BATCH) {
      const kinds: Kind[] = [];
      const runs = Array.from({ length: BATCH }, (_, j) => {
        const i = start + j;
        const kind = KINDS[i % KINDS.length]!;
        kinds.push(kind);
        const task = `${kind}:${i}`;
        const options = { scope: { tenantId: `tenant-${i % 3}` } } as { scope: { tenantId: string }; signal?: AbortSignal };
        if (kind === 'aborted-mid-call' || kind === 'aborted-before') {
          const c = new AbortController();
          if (kind === 'aborted-before') c.abort();
          controllers.set(task, c);
          options.signal = c.signal;
        }
        return agent.run(task, options);
      });
      const settled = await Promise.allSettled(runs);
      settled.forEach((s, j) => {
        const tally = seen.get(kinds[j]!)!;
        if (s.status === 'fulfilled') {
          tally.ok++;
          const tool = s.value.messages.find((m) => m.role === 'tool');
          if (tool) tally.toolTexts.add(tool.content.replace(/"[^"]*"|\d+/g, '_'));
        } else {
          const name = (s.reason as Error).name;
          tally.rejected.set(name, (tally.rejected.get(name) ?? 0) + 1);
        }
      });
      controllers.clear();
      expect(collector.openRuns, `after the batch starting at run ${start}`).toBe(0);
    }

    const per = (kind: Kind) => Array.from({ length: RUNS }, (_, i) => KINDS[i % KINDS.length]).filter((k) => k === kind).length;
    // Each kind took the path it names, or the zero below would prove less than it says.
    expect(seen.get('ok')!.ok).toBe(per('ok'));
    expect(seen.get('model-error')!.rejected.get('Error')).toBe(per('model-error'));
    expect(seen.get('aborted-mid-call')!.rejected.get('AbortError')).toBe(per('aborted-mid-call'));
    expect(seen.get('aborted-before')!.rejected.get('AbortError')).toBe(per('aborted-before'));
    expect(seen.get('child-timeout')!.ok).toBe(per('child-timeout'));
    expect([...seen.get('child-timeout')!.toolTexts].every((t) => t.includes('timed out'))).toBe(true);
    expect(seen.get('child-error')!.ok).toBe(per('child-error'));
    expect([...seen.get('child-error')!.toolTexts].every((t) => t.includes('kid exploded'))).toBe(true);

    expect(collector.openRuns).toBe(0);
    for (const tenant of ['tenant-0', 'tenant-1', 'tenant-2']) {
      const held = store.usage(tenant, undefined, Date.now());
      expect(held.reserved, tenant).toEqual({ tokens: 0, costUsd: 0 });
      const ledger = collector.tenant(tenant).usage;
      expect(held.spent.tokens, tenant).toBe(ledger.inputTokens + ledger.outputTokens);
    }
    expect(store.inFlightCount).toBe(0);
    // Every reservation ended one way or the other: settled with usage, or released on failure.
    const open = [...store.reservations.values()].filter((r) => r.actual === undefined && !r.released);
    expect(open).toEqual([]);
    expect([...store.reservations.values()].some((r) => r.released)).toBe(true);
  });
});

/**
 * Issue 31, adversarial: a store that answers turns() with garbage. agent.session().turns() and
 * totals() refuse it with a SessionStoreUnavailableError saying what came back, and a store whose
 * pages never move back is refused instead of being paged for ever.
 */
import { describe, expect, it } from 'vitest';
import { InMemorySessionStore, SessionStoreUnavailableError, SymfonicAgent, type SessionStore, type SessionTurnRecord } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

function agentAnswering(turns: SessionStore['turns']): SymfonicAgent {
  const inner = new InMemorySessionStore();
  const store: SessionStore = { load: (k, o) => inner.load(k, o), append: (k, t) => inner.append(k, t), turns, clear: (t, s) => inner.clear(t, s) };
  return new SymfonicAgent({ name: 'support', modelProvider: scriptedModel(['x']), sessions: store });
}

const usage = { inputTokens: 1, outputTokens: 1, source: 'reported' as const };
const record = (id: string): SessionTurnRecord => ({ rootRunId: id, traceId: null, agent: 'support', at: new Date(0).toISOString(), usage, totalUsage: usage, costUsd: 0, totalCostUsd: 0, status: 'completed' });

describe('a session store answering turns() with garbage', () => {
  it('is refused when the page is not a list of records, saying where', async () => {
    const notAList = agentAnswering(() => Promise.resolve('garbage' as never));
    const error = await notAList.session('acme', 'chat').totals().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionStoreUnavailableError);
    expect((error as Error).message).toMatch(/not a page of turn records \(at the top: string, not an array\)/);

    const noUsage = agentAnswering(() => Promise.resolve([record('r1'), { ...record('r2'), totalUsage: { inputTokens: 'lots' } } as never]));
    await expect(noUsage.session('acme', 'chat').totals()).rejects.toThrow(/at 1: usage or totalUsage is not/);

    const tooMany = agentAnswering(() => Promise.resolve(Array.from({ length: 1_001 }, (_, i) => record(`r${i}`))));
    await expect(tooMany.session('acme', 'chat').turns()).rejects.toThrow(/1001 records, more than the 1000 a page holds/);
  });

  it('is refused when its pages do not move back, never paged for ever', async () => {
    const full = Array.from({ length: 1_000 }, (_, i) => record(`r${i}`));
    let calls = 0;
    const stuck = agentAnswering(() => {
      calls++;
      return Promise.resolve(full);
    });
    await expect(stuck.session('acme', 'chat').turns()).rejects.toThrow(/answered turns\(\{ before: "r0" \}\) with a page holding that turn again/);
    expect(calls).toBe(2);
  });
});

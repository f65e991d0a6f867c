/**
 * Issue 29: a 10 MiB `userId` was accepted, and left 48 MiB in Redis. Every field of a scope is
 * bounded where a scope comes in (`makeScope`, behind every run, resume and stream), with an error
 * naming the field and its limit, before anything is called, charged or recorded.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, InMemoryBudgetStore, MetricsCollector, SymfonicAgent, TenantBudgets } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

const MIB = 1024 * 1024;

describe('every scope field is bounded at the door', () => {
  it.each([
    ['userId', { tenantId: 'acme', userId: 'u'.repeat(10 * MIB) }, /userId must be at most 256 characters \(this one has 10485760\)/],
    ['tenantId', { tenantId: 't'.repeat(257) }, /tenantId must be at most 256 characters \(this one has 257\)/],
    ['sessionId', { tenantId: 'acme', sessionId: 's'.repeat(MIB) }, /sessionId must be at most 256 characters/],
    ['an attribute value', { tenantId: 'acme', attributes: { plan: 'p'.repeat(MIB) } }, /attributes value must be at most 1024 characters/],
    ['an attribute key', { tenantId: 'acme', attributes: { ['k'.repeat(129)]: 'v' } }, /attributes key must be at most 128 characters/],
    ['the number of attributes', { tenantId: 'acme', attributes: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`a${i}`, 'v'])) }, /attributes may hold at most 64 entries \(these have 10000\)/],
  ])('%s past its limit is refused by name, and nothing is called or charged', async (_label, scope, message) => {
    const model = scriptedModel(['answered']);
    const calls: string[] = [];
    const store = new Proxy(new InMemoryBudgetStore(), {
      get: (target, key) => {
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? (...args: unknown[]) => (calls.push(String(key)), (value as (...a: unknown[]) => unknown).apply(target, args)) : value;
      },
    });
    const metricsCollector = new MetricsCollector({ budgets: new TenantBudgets({ store, limits: { acme: { maxTokens: 1_000_000 } } }) });
    const agent = new SymfonicAgent({ name: 'a', modelProvider: model, metricsCollector });
    const error = await agent.run('go', { scope }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message.length).toBeLessThan(1000);
    expect(model.calls).toHaveLength(0);
    expect(calls.filter((c) => c !== 'id' && c !== 'name')).toEqual([]);
  });

  it('a scope at every limit runs', async () => {
    const scope = {
      tenantId: 't'.repeat(256),
      userId: 'u'.repeat(256),
      sessionId: 's'.repeat(256),
      attributes: Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`${i}`.padEnd(128, 'k'), 'v'.repeat(1024)])),
    };
    const response = await new SymfonicAgent({ name: 'a', modelProvider: scriptedModel(['answered']) }).run('go', { scope });
    expect(response.text).toBe('answered');
  });
});

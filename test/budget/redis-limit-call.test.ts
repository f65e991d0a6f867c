/**
 * What the Redis store sends for a limit is worked out once per limit object only when nothing in
 * it can change (frozenThrough, shared with storeLimit's views): a limit with anything mutable in
 * it, a level's caps included, is worked out again on every call, so a change in place is sent.
 */
import { describe, expect, it } from 'vitest';
import { limitCall } from '../../src/budget/redis/redis-script-calls.js';
import { checkedLimit, storeLimit } from '../../src/budget/tenant-limit.js';

describe("the Redis store's per-limit work", () => {
  it("is kept for a checked limit's view, and sent as the view's caps say", () => {
    const view = storeLimit(checkedLimit({ maxTokens: 1000, perUser: { maxTokens: 300 } }, 'test'), { tenantId: 'acme', userId: 'alice' });
    const first = limitCall(view);
    expect(limitCall(view)).toBe(first);
    // Each inner level's id by INNER_LEVELS' order, '' where none: the user's, then no session.
    expect(first.suffix).toBe(':alice:');
    expect(first.levels.map((l) => l.maxTokens)).toEqual(['1000', '300']);
  });

  it('is worked out again for a limit frozen on top but with a level that may still change', () => {
    const level = { level: 'user' as const, id: 'alice', maxTokens: 300 };
    const limit = Object.freeze({ maxTokens: 1000, levels: Object.freeze([level]) });
    expect(limitCall(limit).levels.map((l) => l.maxTokens)).toEqual(['1000', '300']);
    level.maxTokens = 50;
    expect(limitCall(limit).levels.map((l) => l.maxTokens)).toEqual(['1000', '50']);
  });
});

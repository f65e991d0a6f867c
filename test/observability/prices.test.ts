import { calcPrice } from '@pydantic/genai-prices';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import type { Usage } from '../../src/core/usage.js';
import { costOf, defaultPrices, priceTable, type ModelPrice } from '../../src/accounting/prices.js';

const usage = (inputTokens: number, outputTokens: number, cacheReadInputTokens?: number): Usage => {
  const u: Usage = { inputTokens, outputTokens, source: 'reported' };
  if (cacheReadInputTokens !== undefined) u.cacheReadInputTokens = cacheReadInputTokens;
  return u;
};

/** The package's own figure for the same usage, in its own usage format. */
function packageCost(u: Usage, model: string, providerId?: string): number {
  const result = calcPrice(
    { input_tokens: u.inputTokens, output_tokens: u.outputTokens, cache_read_tokens: u.cacheReadInputTokens ?? 0 },
    model,
    providerId ? { providerId } : {},
  );
  if (result === null) throw new Error(`genai-prices does not know ${model}; pick another model for this test`);
  return result.total_price;
}

function refusal(table: unknown): ConfigurationError {
  try {
    priceTable(table as Record<string, ModelPrice>);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error('priceTable accepted a bad table');
}

describe('priceTable', () => {
  const table = priceTable({
    'model-a': { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3 },
    'model-b': { inputPerMTok: 0.5, outputPerMTok: 1.5 },
  });

  it('gives exact figures for a known model, whatever the provider', () => {
    const a = table.price('openai', 'model-a');
    expect(a).toEqual({ inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3 });
    expect(table.price('anything-else', 'model-a')).toEqual(a);
    expect(costOf(usage(1_000_000, 0), a!)).toBe(3);
    expect(costOf(usage(0, 1_000_000), a!)).toBe(15);
    expect(costOf(usage(2000, 1000), a!)).toBeCloseTo((2000 * 3 + 1000 * 15) / 1e6, 15);
    expect(costOf(usage(0, 0), a!)).toBe(0);
  });

  it('returns null for an unknown model, never a zero price', () => {
    expect(table.price('openai', 'model-c')).toBeNull();
    expect(table.price('openai', 'MODEL-A')).toBeNull(); // exact match only
    expect(table.price('openai', 'toString')).toBeNull(); // no prototype leaks
    expect(table.price('openai', '')).toBeNull();
  });

  it('prices cached input at the cache rate, and at the input rate when none is given', () => {
    const a = table.price('p', 'model-a')!;
    // 1000 input of which 400 cached: 600 at 3, 400 at 0.3, plus 100 output at 15.
    expect(costOf(usage(1000, 100, 400), a)).toBeCloseTo((600 * 3 + 400 * 0.3 + 100 * 15) / 1e6, 15);
    const b = table.price('p', 'model-b')!;
    expect(costOf(usage(1000, 100, 400), b)).toBeCloseTo(costOf(usage(1000, 100), b), 15);
    // A cache figure larger than the input (a provider bug) never makes uncached input negative.
    expect(costOf(usage(100, 0, 500), a)).toBeCloseTo((100 * 0.3) / 1e6, 15);
  });

  it('does not let a caller mutate the table through a returned price', () => {
    const a = table.price('p', 'model-a')!;
    expect(() => {
      (a as { inputPerMTok: number }).inputPerMTok = 0;
    }).toThrow(TypeError);
    expect(table.price('p', 'model-a')!.inputPerMTok).toBe(3);
  });

  it('refuses a negative price, naming the model, the field and the fix', () => {
    const e = refusal({ 'my-model': { inputPerMTok: -1, outputPerMTok: 2 } });
    expect(e.message).toContain('"my-model"');
    expect(e.message).toContain('"inputPerMTok"');
    expect(e.message).toContain('non-negative finite number');
    expect(e.message).toContain('got -1');
    expect(e.message).toMatch(/set it to/);
  });

  it.each([
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a string', '0.5'],
    ['null', null],
  ])('refuses %s as a rate', (_label, bad) => {
    const e = refusal({ m1: { inputPerMTok: 1, outputPerMTok: bad } });
    expect(e.message).toContain('"m1"');
    expect(e.message).toContain('"outputPerMTok"');
  });

  it('refuses a missing required field', () => {
    const e = refusal({ m1: { inputPerMTok: 1 } });
    expect(e.message).toContain('"outputPerMTok"');
    expect(e.message).toContain('got nothing');
  });

  it('refuses an unknown (misspelt) field rather than ignoring it', () => {
    const e = refusal({ m1: { inputPerMTok: 1, outputPerMTok: 2, cacheReadPerMtok: 0.1 } });
    expect(e.message).toContain('"m1"');
    expect(e.message).toContain('"cacheReadPerMtok"');
    expect(e.message).toContain('cacheReadPerMTok (optional)');
  });

  it('refuses a table that is not an object of objects', () => {
    expect(refusal(null).message).toContain('keyed by model name');
    expect(refusal({ m1: 3 }).message).toContain('model "m1" must be an object');
  });

  it('reports every problem at once', () => {
    const e = refusal({ a: { inputPerMTok: -1, outputPerMTok: 1 }, b: { inputPerMTok: 1, outputPerMTok: -2 } });
    expect(e.message).toContain('model "a"');
    expect(e.message).toContain('model "b"');
  });
});

describe('defaultPrices (genai-prices)', () => {
  const u = usage(12_345, 678, 2_345);

  it('prices gpt-4o-mini exactly as the package does, cached tokens included', () => {
    const price = defaultPrices().price('openai', 'gpt-4o-mini');
    expect(price).not.toBeNull();
    expect(price!.cacheReadPerMTok).toBeDefined();
    expect(price!.cacheReadPerMTok).toBeLessThan(price!.inputPerMTok);
    expect(costOf(u, price!)).toBeCloseTo(packageCost(u, 'gpt-4o-mini', 'openai'), 12);
  });

  it('prices claude-sonnet-4 exactly as the package does', () => {
    const price = defaultPrices().price('anthropic', 'claude-sonnet-4');
    expect(price).not.toBeNull();
    expect(costOf(u, price!)).toBeCloseTo(packageCost(u, 'claude-sonnet-4', 'anthropic'), 12);
  });

  it('returns null for a model nobody prices, under any provider name', () => {
    const prices = defaultPrices();
    for (const provider of ['openai', 'anthropic', 'openai-compatible', 'some-vendor', '']) {
      expect(prices.price(provider, 'no-such-model-xyz')).toBeNull();
    }
    expect(prices.price('openai', '')).toBeNull();
  });

  it('matches on the model name alone for an unknown vendor or an OpenAI-compatible endpoint', () => {
    const prices = defaultPrices();
    const direct = prices.price('openai', 'gpt-4o-mini');
    expect(prices.price('openai-compatible', 'gpt-4o-mini')).toEqual(direct);
    expect(prices.price('some-vendor', 'gpt-4o-mini')).toEqual(direct);
  });

  it("does not price a known vendor's request with another vendor's model", () => {
    expect(defaultPrices().price('anthropic', 'gpt-4o-mini')).toBeNull();
  });

  it('memoises per (provider, model): the second lookup returns the same frozen object', () => {
    const prices = defaultPrices();
    const first = prices.price('openai', 'gpt-4o-mini');
    expect(prices.price('openai', 'gpt-4o-mini')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    const miss = prices.price('openai', 'no-such-model-xyz');
    expect(prices.price('openai', 'no-such-model-xyz')).toBe(miss);
  });

  it('gives the base rate of a tiered price, which equals the package below the first tier', () => {
    const price = defaultPrices().price('gcp.gemini', 'gemini-2.5-pro');
    expect(price).not.toBeNull();
    const small = usage(10_000, 1_000, 1_000);
    expect(costOf(small, price!)).toBeCloseTo(packageCost(small, 'gemini-2.5-pro', 'google'), 12);
  });
});

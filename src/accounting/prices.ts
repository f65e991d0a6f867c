import { calcPrice, findProvider } from '@pydantic/genai-prices';
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.js';
import type { Usage } from '../core/usage.js';

/** USD per million tokens. `cacheReadPerMTok` absent means cached input costs the same as input. */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
  cacheReadPerMTok?: number;
  /**
   * The most the model writes in one answer, when known: a budget reserves no more than this for
   * a call that sets no maxTokens. From `defaultPrices()` it is the model's context window (what
   * the package knows; the answer cannot be longer).
   */
  maxOutputTokens?: number;
}

/**
 * Answers "what does this model cost?". `null` means "no price is known", which is not the same
 * fact as "free": a cost computed from null is reported as null, never as 0.
 */
export interface PriceTable {
  price(providerName: string, modelName: string): ModelPrice | null;
}

// Messages are written by describeIssue below, from the path; zod only decides what is wrong.
const rate = () => z.number().refine((n) => Number.isFinite(n) && n >= 0);

const modelPriceSchema = z.strictObject({
  inputPerMTok: rate(),
  outputPerMTok: rate(),
  cacheReadPerMTok: rate().optional(),
  maxOutputTokens: z.number().refine((n) => Number.isInteger(n) && n > 0).optional(),
});

const tableSchema = z.record(z.string().min(1, 'a model name must not be empty'), modelPriceSchema);

const FIELDS = 'inputPerMTok, outputPerMTok, cacheReadPerMTok (optional), maxOutputTokens (optional)';

function describeIssue(issue: z.core.$ZodIssue, table: unknown): string {
  const [model, field] = issue.path;
  if (model === undefined) {
    return `the price table must be an object keyed by model name, like { "gpt-4o-mini": { inputPerMTok: 0.15, outputPerMTok: 0.6 } }`;
  }
  const where = `model "${String(model)}"`;
  if (issue.code === 'unrecognized_keys') {
    return `${where} has unknown field(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}; the fields are ${FIELDS}. Fix the spelling or remove them`;
  }
  if (issue.code === 'invalid_key') {
    return `a model name must be a non-empty string; remove the "" entry`;
  }
  if (field === undefined) {
    return `${where} must be an object with ${FIELDS}; got ${JSON.stringify(
      (table as Record<string, unknown>)[String(model)],
    )}`;
  }
  const got = ((table as Record<string, Record<string, unknown>>)[String(model)] ?? {})[String(field)];
  const shown = got === undefined ? 'nothing' : typeof got === 'number' ? String(got) : JSON.stringify(got);
  if (field === 'maxOutputTokens') return `${where} field "maxOutputTokens" must be a whole number of tokens above 0, got ${shown}`;
  return `${where} field "${String(field)}" must be a non-negative finite number (USD per million tokens), got ${shown}; set it to the provider's published price`;
}

/**
 * A fixed price table keyed by exact model name (the provider name is ignored). The table is
 * validated once, here: a negative, non-finite or misspelt field is a ConfigurationError, not a
 * silently wrong bill later.
 */
export function priceTable(table: Record<string, ModelPrice>): PriceTable {
  const parsed = tableSchema.safeParse(table);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => describeIssue(i, table));
    throw new ConfigurationError(`invalid price table: ${problems.join('; ')}.`);
  }
  const byModel = new Map<string, ModelPrice>();
  for (const [model, p] of Object.entries(parsed.data)) {
    const price: ModelPrice = { inputPerMTok: p.inputPerMTok, outputPerMTok: p.outputPerMTok };
    if (p.cacheReadPerMTok !== undefined) price.cacheReadPerMTok = p.cacheReadPerMTok;
    if (p.maxOutputTokens !== undefined) price.maxOutputTokens = p.maxOutputTokens;
    byModel.set(model, Object.freeze(price));
  }
  return {
    price(_providerName: string, modelName: string): ModelPrice | null {
      return byModel.get(modelName) ?? null;
    },
  };
}

/**
 * symfonic provider names (and OpenTelemetry `gen_ai.provider.name` values) to genai-prices
 * provider ids. `null` means "the vendor is unknown": match on the model name alone.
 * A name not listed here is tried as a genai-prices id (or its provider_match) first.
 */
const PROVIDER_IDS: Readonly<Record<string, string | null>> = {
  openai: 'openai',
  anthropic: 'anthropic',
  // An OpenAI-compatible endpoint can be anyone (Groq, vLLM, a proxy, OpenAI itself); the package
  // would match 'openai-compatible' to OpenAI by substring, so this says "unknown" on purpose.
  'openai-compatible': null,
  'azure.ai.openai': 'azure',
  'aws.bedrock': 'aws',
  'gcp.gemini': 'google',
  'gcp.vertex_ai': 'google',
  'gcp.gen_ai': 'google',
  x_ai: 'x-ai',
  mistral_ai: 'mistral',
};

// Token counts only: the package prices what it is given, and the rates are read back from
// `model_price`, so the figures here do not matter.
const PROBE = { input_tokens: 0, output_tokens: 0 };

/** A flat rate from the package's value: tiered prices give their base (first-tier) rate. */
function flatRate(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'object' && value !== null && typeof (value as { base?: unknown }).base === 'number') {
    return (value as { base: number }).base;
  }
  return undefined;
}

function lookup(providerName: string, modelName: string): ModelPrice | null {
  if (modelName === '') return null;
  const mapped = Object.prototype.hasOwnProperty.call(PROVIDER_IDS, providerName)
    ? PROVIDER_IDS[providerName]
    : providerName;
  let result: ReturnType<typeof calcPrice>;
  try {
    // A vendor the package knows is asked alone (with the package's own fallbacks): a model it
    // does not price is unknown, not some other vendor's model of the same name. An unknown
    // vendor gets the package's model-name matching.
    const provider = mapped ? findProvider({ providerId: mapped }) : undefined;
    result = provider ? calcPrice(PROBE, modelName, { providerId: provider.id }) : calcPrice(PROBE, modelName);
  } catch {
    // Malformed price data for one model must not fail a run: the price is simply unknown.
    return null;
  }
  if (result === null) return null;
  const p = result.model_price;
  const input = flatRate(p['input_mtok']);
  const output = flatRate(p['output_mtok']);
  // A model priced per request, per image or per second has no token rate to give.
  if (input === undefined || output === undefined) return null;
  const price: ModelPrice = { inputPerMTok: input, outputPerMTok: output };
  const cacheRead = flatRate(p['cache_read_mtok']);
  if (cacheRead !== undefined) price.cacheReadPerMTok = cacheRead;
  const window = result.model.context_window;
  if (typeof window === 'number' && Number.isInteger(window) && window > 0) price.maxOutputTokens = window;
  return Object.freeze(price);
}

/** Bound on memoised (provider, model) pairs, so odd model names cannot grow memory without end. */
const MAX_MEMO = 1024;

/**
 * Prices from `@pydantic/genai-prices` (the bundled data of the installed version; nothing is
 * fetched). Each (provider, model) pair is resolved once and memoised, so the hot path is one
 * Map lookup. Tiered prices give their base rate and date- or time-of-day-dependent prices are
 * fixed at first lookup; see docs/design.md for the limits.
 */
export function defaultPrices(): PriceTable {
  const memo = new Map<string, ModelPrice | null>();
  return {
    price(providerName: string, modelName: string): ModelPrice | null {
      const key = providerName + '\u0000' + modelName;
      const hit = memo.get(key);
      if (hit !== undefined) return hit;
      const found = lookup(providerName, modelName);
      if (memo.size < MAX_MEMO) memo.set(key, found);
      return found;
    },
  };
}

/**
 * The cost of `usage` in USD. `inputTokens` includes cached input: the cached part is priced at
 * `cacheReadPerMTok` (or the input rate when none is given), the rest at `inputPerMTok`.
 */
export function costOf(usage: Usage, price: ModelPrice): number {
  const cached = Math.min(Math.max(usage.cacheReadInputTokens ?? 0, 0), usage.inputTokens);
  const uncached = usage.inputTokens - cached;
  return (
    (uncached * price.inputPerMTok +
      cached * (price.cacheReadPerMTok ?? price.inputPerMTok) +
      usage.outputTokens * price.outputPerMTok) /
    1_000_000
  );
}

/**
 * Token usage of one or more model calls. `source` keeps provenance: a figure the provider
 * reported is not the same fact as one symfonic estimated, and a sum that mixes them is marked
 * estimated so nobody bills from a guess without knowing it.
 *
 * `inputTokens` always includes cached input; `cacheReadInputTokens` is the part of it read from
 * the provider's cache (OpenAI's convention). Adapters normalise to this before pricing.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens?: number;
  source: 'reported' | 'estimated';
}

export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, source: 'reported' };
}

/** a + b, as a new value. */
export function addUsage(a: Usage, b: Usage): Usage {
  const out: Usage = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    source: a.source === 'estimated' || b.source === 'estimated' ? 'estimated' : 'reported',
  };
  const cache = (a.cacheReadInputTokens ?? 0) + (b.cacheReadInputTokens ?? 0);
  if (cache > 0 || a.cacheReadInputTokens !== undefined || b.cacheReadInputTokens !== undefined) {
    out.cacheReadInputTokens = cache;
  }
  return out;
}

/** Adds b into a in place; the collector's hot path uses this to avoid an allocation per call. */
export function addUsageInto(a: Usage, b: Usage): void {
  a.inputTokens += b.inputTokens;
  a.outputTokens += b.outputTokens;
  if (b.cacheReadInputTokens !== undefined) a.cacheReadInputTokens = (a.cacheReadInputTokens ?? 0) + b.cacheReadInputTokens;
  if (b.source === 'estimated') a.source = 'estimated';
}

export function copyUsage(u: Usage): Usage {
  const out: Usage = { inputTokens: u.inputTokens, outputTokens: u.outputTokens, source: u.source };
  if (u.cacheReadInputTokens !== undefined) out.cacheReadInputTokens = u.cacheReadInputTokens;
  return out;
}

export function totalTokens(u: Usage): number {
  return u.inputTokens + u.outputTokens;
}

/** A rough token count for text (4 characters a token), used only where no provider reports one. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * The most tokens one report (a model call, or a whole child subtree) may claim in any one
 * count: far above any real subtree, far below where sums lose precision (2^53). `1e308` added
 * twice is `Infinity`, which turns a rolling window's subtraction into `NaN` and a limit off for
 * good; a figure past the ceiling is capped to it and marked estimated, never dropped, so an
 * absurd report still costs its tenant the most a report can, rather than nothing.
 */
export const MAX_REPORTED_TOKENS = 1_000_000_000;

function isWholeCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 0;
}

/**
 * Usage from outside symfonic's own arithmetic (a provider, a foreign child, a remote answer),
 * as a clean copy: whole, non-negative counts, each capped at MAX_REPORTED_TOKENS (and then
 * marked estimated). Undefined when a count is missing, negative, fractional, NaN or not a
 * number: the caller estimates instead and marks the figure so. Such a count would poison every
 * ledger and budget comparison it joined.
 */
export function soundUsage(u: unknown): Usage | undefined {
  if (typeof u !== 'object' || u === null) return undefined;
  const r = u as Partial<Record<keyof Usage, unknown>>;
  const cache = r.cacheReadInputTokens;
  if (!isWholeCount(r.inputTokens) || !isWholeCount(r.outputTokens)) return undefined;
  if (cache !== undefined && (!isWholeCount(cache) || cache > r.inputTokens)) return undefined;
  const capped = r.inputTokens > MAX_REPORTED_TOKENS || r.outputTokens > MAX_REPORTED_TOKENS;
  const out: Usage = {
    inputTokens: Math.min(r.inputTokens, MAX_REPORTED_TOKENS),
    outputTokens: Math.min(r.outputTokens, MAX_REPORTED_TOKENS),
    source: capped || r.source === 'estimated' ? 'estimated' : 'reported',
  };
  if (cache !== undefined) out.cacheReadInputTokens = Math.min(cache, out.inputTokens);
  return out;
}

/** The most USD one report may claim; a larger figure is capped to it, like tokens. */
const MAX_REPORTED_COST_USD = 1_000_000;

/** A cost from outside symfonic: finite and non-negative (capped at MAX_REPORTED_COST_USD), else null (unknown). */
export function soundCost(c: unknown): number | null {
  return typeof c === 'number' && Number.isFinite(c) && c >= 0 ? Math.min(c, MAX_REPORTED_COST_USD) : null;
}

/**
 * The usage of work whose figures are unknown (a child outside symfonic, an A2A agent that
 * reports none), from the text that went in and came out: marked estimated, and never 0, since
 * work was done.
 */
export function estimatedUsage(input: string, output: string): Usage {
  return { inputTokens: Math.max(1, estimateTokens(input)), outputTokens: estimateTokens(output), source: 'estimated' };
}

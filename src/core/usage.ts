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

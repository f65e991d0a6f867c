import { formatUsd } from '../trace/usd.js';

/** Figures as the pictures print them (terminal and HTML alike). */

export function formatTokens(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** USD by the one rule for costs (formatUsd); null is "no price known", not free. */
export function formatCost(usd: number | null): string {
  return usd === null ? '–' : formatUsd(usd);
}

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

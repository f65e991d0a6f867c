/*
 * The one rule for dollar amounts people and programs read: events, `--json`, pictures, the HTML
 * page, a response's and a collector's figures. Costs are sums of float products (tokens × price
 * per token), so they carry float dust (0.00005039999999999999) in the 16th or 17th digit.
 */

/**
 * Significant digits a cost keeps as a number: past float dust, and enough that a tenant's
 * month of spend ($12,345.6789012) and the runs that make it up still add up to the cent and far
 * below (six digits did not: $1.192016 read $1.19202).
 */
export const USD_DIGITS = 12;

/** A cost rounded to `digits` significant digits, as a number; null (no known price) stays null. */
export function roundUsd<T extends number | null>(usd: T, digits?: number): T;
export function roundUsd(usd: number | null, digits = USD_DIGITS): number | null {
  if (usd === null || usd === 0 || !Number.isFinite(usd)) return usd;
  return shortDecimal(usd, digits) ?? Number(usd.toPrecision(digits));
}

/** 10^k for k = 0..22, each exact (10^23 is not a double). */
const POW10 = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));

/**
 * `Number(usd.toPrecision(digits))` without the text, for a cost that already has at most `digits`
 * significant digits (give or take float error), as most figures do (0.00096, 0.3 from
 * 0.30000000000000004): then usd × 10^k lands exactly on that decimal's digits n, an integer below
 * 10^digits (the product's error is under 2^-13, so toPrecision rounds to n as well), and n / 10^k,
 * both exact, is the double nearest that decimal, which is what Number() reads back from its text.
 * Undefined when digits must be rounded off: toPrecision does that. An exponent Math.log10 got
 * wrong by one only makes n too long (undefined) or a digit shorter (the same decimal).
 */
function shortDecimal(usd: number, digits: number): number | undefined {
  if (digits > 15) return undefined;
  const k = digits - 1 - Math.floor(Math.log10(Math.abs(usd)));
  const scale = POW10[k];
  if (scale === undefined) return undefined;
  const n = usd * scale;
  return Number.isInteger(n) && Math.abs(n) < POW10[digits]! ? n / scale : undefined;
}

/**
 * A cost as text: cents from $1 up ($12.35), three significant digits below ($0.0315,
 * $0.000463, $0.0000504), never in exponent notation, never float dust.
 */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0';
  if (!Number.isFinite(usd)) return `$${usd}`;
  const sign = usd < 0 ? '-' : '';
  const x = roundUsd(Math.abs(usd), 3);
  if (x >= 1) return `${sign}$${Math.abs(usd).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  // As many decimals as three significant digits need, then trailing zeros off down to cents.
  const decimals = Math.max(2, 2 - Math.floor(Math.log10(x)));
  return `${sign}$${x.toFixed(decimals).replace(/(\.\d\d\d*?)0+$/, '$1')}`;
}

/**
 * roundUsd keeps twelve significant digits of a cost. Most costs already have no more than that
 * (give or take float dust), and those are read off without building the number's text; the rest
 * are rounded. Either way the figure is the twelve-digit decimal nearest the cost, as a double.
 */
import { describe, expect, it } from 'vitest';
import { roundUsd } from '../../src/trace/usd.js';

/** The decimal of `digits` significant digits nearest x, read back: toExponential's digits, another route than roundUsd's. */
const nearestDecimal = (x: number, digits: number) => parseFloat(x.toExponential(digits - 1));

/** The doubles next to x, up and down: where an exponent read with Math.log10 may come out one off. */
function neighbours(x: number, count: number): number[] {
  const out: number[] = [];
  const bits = new BigInt64Array(new Float64Array([x]).buffer);
  for (const step of [1n, -1n]) {
    const cell = new BigInt64Array([bits[0]!]);
    const view = new Float64Array(cell.buffer);
    for (let i = 0; i < count; i++) {
      cell[0] = cell[0]! + step;
      out.push(view[0]!);
    }
  }
  return out;
}

describe('roundUsd', () => {
  it('drops float dust and rounds off digits past the twelfth', () => {
    expect(roundUsd(0.1 + 0.2)).toBe(0.3);
    expect(roundUsd(-(0.1 + 0.2))).toBe(-0.3);
    expect(roundUsd(120 * 3e-6 + 40 * 15e-6)).toBe(0.00096);
    expect(roundUsd(0.00005039999999999999)).toBe(0.0000504);
    expect(roundUsd(1 / 3)).toBe(0.333333333333);
    expect(roundUsd(123456.78901234567)).toBe(123456.789012);
    expect(roundUsd(2 / 3, 3)).toBe(0.667);
    expect(roundUsd(999999999999.5)).toBe(1e12);
    expect(roundUsd(null)).toBe(null);
    expect(roundUsd(0)).toBe(0);
  });

  it('gives the nearest twelve-digit decimal for costs made as a ledger makes them', () => {
    const inPrices = [0.075, 0.1, 0.15, 0.25, 0.4, 0.5, 0.6, 1, 1.1, 1.25, 2.5, 3, 4.4, 5, 10, 15];
    const outPrices = [0.2, 0.3, 0.4, 0.6, 1.25, 1.6, 2, 2.5, 4, 4.4, 8, 10, 12, 15, 30, 75];
    let seed = 7;
    const next = (below: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % below;
    for (let i = 0; i < 100_000; i++) {
      const own = next(200_000) * (inPrices[i % 16]! / 1e6) + next(20_000) * (outPrices[(i >> 4) % 16]! / 1e6);
      const subtree = own + next(50_000) * (inPrices[(i >> 8) % 16]! / 1e6);
      for (const cost of [own, subtree, -subtree]) {
        if (cost === 0) continue;
        expect(roundUsd(cost), String(cost)).toBe(nearestDecimal(cost, 12));
        expect(roundUsd(cost, 3), String(cost)).toBe(nearestDecimal(cost, 3));
      }
    }
  });

  it('gives the nearest decimal next to powers of ten and at the ends of the fast range', () => {
    for (let e = -15; e <= 15; e++) {
      const power = Number(`1e${e}`);
      for (const x of [power, ...neighbours(power, 40)]) {
        expect(roundUsd(x), String(x)).toBe(nearestDecimal(x, 12));
        expect(roundUsd(x, 3), String(x)).toBe(nearestDecimal(x, 3));
      }
    }
    for (const x of [5e-324, 1.7976931348623157e308, 9.99999999999e-12, 123456789012345.6, 0.30000000000000004]) {
      expect(roundUsd(x), String(x)).toBe(nearestDecimal(x, 12));
      expect(roundUsd(x, 15), String(x)).toBe(nearestDecimal(x, 15));
      expect(roundUsd(x, 16), String(x)).toBe(nearestDecimal(x, 16));
    }
  });
});

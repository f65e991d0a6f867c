/**
 * The benchmark's figures: a per-operation figure that is a difference of two measurements (the
 * hop is a parent run minus two leaf runs) can come out below zero when noise outweighs it. It is
 * reported as noise, never as a negative CPU time.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

interface Timing {
  wall: number;
  cpu: number;
}
interface Harness {
  result(name: string, perRound: Timing[], n: number, extra?: Record<string, unknown>): Record<string, unknown>;
  printTable(results: Record<string, unknown>[]): void;
}

// A JavaScript module checked by its own JSDoc; imported by a computed specifier so the test's
// typecheck does not need declarations for it.
const harness = async () => (await import('../../bench/harness.js' as string)) as Harness;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('bench harness figures', () => {
  it('reports a CPU median below zero as noise (null), and prints "noise", not a negative number', async () => {
    const { result, printTable } = await harness();
    const hop = result('hop', [{ wall: 10, cpu: -3 }, { wall: 12, cpu: -1 }, { wall: 11, cpu: 2 }], 500);
    expect(hop['cpu_median_us']).toBeNull();
    expect(hop['cpu_p90_us']).toBeNull();
    expect(hop['cpu_noise']).toBe(true);
    expect(hop['median_us']).toBe(11);
    let printed = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed += String(chunk);
      return true;
    });
    printTable([hop]);
    vi.restoreAllMocks();
    const row = printed.split('\n').find((l) => l.startsWith('hop'))!;
    expect(row).toContain('noise');
    expect(row).not.toMatch(/(^|\s)-\d/);
  });

  it('keeps measured figures as they are', async () => {
    const { result } = await harness();
    const floor = result('floor', [{ wall: 5, cpu: 6 }, { wall: 7, cpu: 8 }, { wall: 6, cpu: 7 }], 1000);
    expect(floor).toMatchObject({ case: 'floor', median_us: 6, cpu_median_us: 7, cpu_p90_us: 8, rounds: 3, n: 1000 });
    expect(floor).not.toHaveProperty('cpu_noise');
  });
});

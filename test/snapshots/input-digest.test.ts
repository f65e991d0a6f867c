/**
 * An approval's inputDigest is documented as SHA-256 (hex) of JSON.stringify([tool, arguments]):
 * an application may compute it itself to bind what its approver saw. It is made with Node's
 * one-shot hash where the running Node has one (issue 33); these hold it to the documented
 * digest, computed here the long way, for the text a snapshot keeps.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { inputDigest } from '../../src/run/snapshot/input-digest.js';
import { refundDesk, scope } from './refund-desk.js';

const documented = (tool: string, args: string) => createHash('sha256').update(JSON.stringify([tool, args])).digest('hex');

describe('inputDigest', () => {
  it('is SHA-256 of JSON.stringify([tool, arguments]), for ASCII, non-ASCII, a lone surrogate and long arguments', () => {
    const cases: [string, string][] = [
      ['refund', '{"orderId":"A-17","amountUsd":250}'],
      ['überweisen', '{"note":"Grüße, 東京 🎌"}'],
      ['odd', '{"x":"\ud800"}'],
      ['bulk', JSON.stringify({ rows: 'x'.repeat(200_000) })],
      ['', ''],
    ];
    for (const [tool, args] of cases) expect(inputDigest(tool, args)).toBe(documented(tool, args));
    expect(inputDigest('refund', '{"a":1}')).not.toBe(inputDigest('refund', '{"a":2}'));
  });

  it("a suspended run's approval carries the documented digest of the call its snapshot keeps", async () => {
    const r = await refundDesk({ unsignedSnapshots: true }).desk.run('Handle ticket 9.', { scope });
    const waiting = r.interruptions[0]!;
    const text = JSON.stringify(r.snapshot);
    const args = /"name":"refund","arguments":("(?:[^"\\]|\\.)*")/.exec(text)?.[1];
    expect(args).toBeDefined();
    expect(waiting.inputDigest).toBe(documented('refund', JSON.parse(args!) as string));
  });
});

/**
 * Issue 29: snapshots carried a tool result's key, an IBAN, the user's email and the scope in
 * clear. With `snapshotEncryptionKey` the snapshot is `{ v, enc, iv, tag }` (AES-256-GCM): none of
 * it readable, resumed only with the key; a wrong key, an edited ciphertext, a plain snapshot
 * where an encrypted one is expected, or a key that is not 32 bytes are refused.
 */
import { createSecretKey, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, SnapshotError, SymfonicAgent, defineTool, type SymfonicAgentOptions } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

const SECRETS = ['sk_live_51HxSecretKeyValue', 'DE89370400440532013000', 'jane.doe@example.com', 'acme-tenant', 'vip-plan'];

/** A teller whose lookup returns a key and an IBAN, asked by a user whose email is in the task; its wire waits for approval. */
function teller(options: Pick<SymfonicAgentOptions, 'snapshotEncryptionKey' | 'snapshotKey' | 'unsignedSnapshots'>, wired: string[] = []) {
  const lookup = defineTool({ name: 'lookup', description: 'Account.', input: z.object({}), execute: () => `api key ${SECRETS[0]}, IBAN ${SECRETS[1]}` });
  const wire = defineTool({ name: 'wire', description: 'Wires.', input: z.object({ iban: z.string() }), needsApproval: true, execute: ({ iban }) => (wired.push(iban), `wired to ${iban}`) });
  const model = scriptedModel((req) => {
    const tools = req.messages.filter((m) => m.role === 'tool');
    if (tools.length === 0) return { toolCalls: [{ name: 'lookup', arguments: {} }, { name: 'wire', arguments: { iban: SECRETS[1] } }] };
    return `done: ${tools.at(-1)!.content}`;
  });
  return { agent: new SymfonicAgent({ name: 'teller', modelProvider: model, tools: [lookup, wire], ...options }), wired };
}

const task = `Wire my balance for ${SECRETS[2]}.`;
const scope = { tenantId: SECRETS[3]!, attributes: { plan: SECRETS[4]! } };
const KEY = randomBytes(32);

async function suspended(key: SymfonicAgentOptions['snapshotEncryptionKey']) {
  const r = await teller({ snapshotEncryptionKey: key }).agent.run(task, { scope });
  expect(r.status).toBe('suspended');
  return { r, decisions: { [r.interruptions[0]!.id]: { approve: true as const } } };
}

describe('an encrypted snapshot', () => {
  it('is { v, enc, iv, tag } and none of the secrets, the email or the scope is in its text', async () => {
    const { r } = await suspended(KEY);
    expect(Object.keys(r.snapshot!).sort()).toEqual(['enc', 'iv', 'tag', 'v']);
    const text = JSON.stringify(r.snapshot);
    for (const s of SECRETS) expect(text).not.toContain(s);
    // The same secrets are in the unencrypted snapshot: what encryption is for.
    const plain = await teller({ unsignedSnapshots: true }).agent.run(task, { scope });
    for (const s of SECRETS) expect(JSON.stringify(plain.snapshot)).toContain(s);
  });

  it.each([
    ['a Buffer', (k: Buffer) => k],
    ['hex', (k: Buffer) => k.toString('hex')],
    ['base64', (k: Buffer) => k.toString('base64')],
    ['a KeyObject', (k: Buffer) => createSecretKey(k)],
  ])('resumes from its JSON text with the key given as %s, and the approved call runs once', async (_, form) => {
    const { r, decisions } = await suspended(form(KEY));
    const fresh = teller({ snapshotEncryptionKey: form(KEY) });
    const done = await fresh.agent.resume(JSON.stringify(r.snapshot), { decisions });
    expect(done.status).toBe('completed');
    expect(fresh.wired).toEqual([SECRETS[1]]);
  });

  it('is refused with another key, edited, or by an agent without the key; nothing runs', async () => {
    const { r, decisions } = await suspended(KEY);
    const other = teller({ snapshotEncryptionKey: randomBytes(32) });
    await expect(other.agent.resume(r.snapshot!, { decisions })).rejects.toThrow(/does not open with agent "teller"'s snapshotEncryptionKey/);
    const enc = Buffer.from((r.snapshot as { enc: string }).enc, 'base64');
    enc[10]! ^= 1;
    const edited = { ...r.snapshot, enc: enc.toString('base64') };
    const keyed = teller({ snapshotEncryptionKey: KEY });
    await expect(keyed.agent.resume(edited as never, { decisions })).rejects.toBeInstanceOf(SnapshotError);
    const keyless = teller({ snapshotKey: 'another-key-0123456789' });
    await expect(keyless.agent.resume(r.snapshot!, { decisions })).rejects.toThrow(/encrypted, and agent "teller" has no snapshotEncryptionKey/);
    expect([...other.wired, ...keyed.wired, ...keyless.wired]).toEqual([]);
  });

  it('an agent with the key refuses a plain snapshot: only snapshots it encrypted resume', async () => {
    const plain = await teller({ unsignedSnapshots: true }).agent.run(task, { scope });
    const keyed = teller({ snapshotEncryptionKey: KEY });
    const err = await keyed.agent.resume(plain.snapshot!, { decisions: { [plain.interruptions[0]!.id]: { approve: true } } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SnapshotError);
    expect((err as Error).message).toMatch(/not encrypted/);
    expect(keyed.wired).toEqual([]);
  });

  it('signing stays: with both keys the decrypted snapshot is signed, and resumes with both', async () => {
    const both = { snapshotEncryptionKey: KEY, snapshotKey: 'both-keys-0123456789' };
    const r = await teller(both).agent.run(task, { scope });
    const fresh = teller(both);
    const done = await fresh.agent.resume(r.snapshot!, { decisions: { [r.interruptions[0]!.id]: { approve: true } } });
    expect(done.status).toBe('completed');
    await expect(teller({ snapshotEncryptionKey: KEY }).agent.resume(r.snapshot!, { decisions: { [r.interruptions[0]!.id]: { approve: true } } })).rejects.toThrow(/signed, but agent "teller" has no snapshotKey/);
  });

  it.each([
    ['31 bytes', randomBytes(31)],
    ['a passphrase', 'correct horse battery staple'],
    ['hex of 16 bytes', randomBytes(16).toString('hex')],
    ['a number', 42],
  ])('a key of %s is refused at construction, saying what a key is', (_, key) => {
    expect(() => teller({ snapshotEncryptionKey: key as never })).toThrow(ConfigurationError);
    expect(() => teller({ snapshotEncryptionKey: key as never })).toThrow(/32 random bytes/);
  });
});

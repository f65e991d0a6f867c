import { createCipheriv, createDecipheriv, createSecretKey, KeyObject, randomBytes } from 'node:crypto';
import { SnapshotError } from '../../core/errors.js';
import type { EncryptedSnapshot, SnapshotCipher } from './snapshot-options.js';


const ALGORITHM = 'aes-256-gcm';
/** Binds the ciphertext to its purpose: the same key used for other data yields nothing that opens as a snapshot. */
const AAD = Buffer.from('symfonic snapshot v1');

export const ENCRYPTION_KEY_HINT =
  'snapshotEncryptionKey must be 32 random bytes: a Buffer, 64 hex characters, base64 of 32 bytes, or a secret KeyObject of 32 bytes ' +
  "(make one with crypto.randomBytes(32).toString('base64') and keep it in your vault).";

/** The key as a KeyObject, or undefined when it is not one of the accepted forms of 32 bytes. */
export function encryptionKeyOf(key: unknown): KeyObject | undefined {
  if (key instanceof KeyObject) return key.type === 'secret' && key.symmetricKeySize === 32 ? key : undefined;
  if (key instanceof Uint8Array) return key.length === 32 ? createSecretKey(Buffer.from(key)) : undefined;
  if (typeof key !== 'string') return undefined;
  if (/^[0-9a-fA-F]{64}$/.test(key)) return createSecretKey(Buffer.from(key, 'hex'));
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(key)) {
    const bytes = Buffer.from(key, key.includes('-') || key.includes('_') ? 'base64url' : 'base64');
    return bytes.length === 32 ? createSecretKey(bytes) : undefined;
  }
  return undefined;
}

function encryptSnapshot(text: string, key: KeyObject): EncryptedSnapshot {
  const iv = randomBytes(12);
  const cipher = createCipheriv(ALGORITHM, key, iv).setAAD(AAD);
  const enc = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return { v: 1, enc: enc.toString('base64'), iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64') };
}

/** Whether a parsed snapshot is an encrypted one (by its envelope's fields), whatever its contents. */
export function isEncrypted(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'enc' in value;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The snapshot's JSON text, decrypted with `key`: a wrong key, an altered ciphertext or a malformed envelope is a SnapshotError. */
function decryptSnapshot(value: object, key: KeyObject, agent: string): string {
  const { v, enc, iv, tag, ...rest } = value as Record<string, unknown>;
  const fields = [enc, iv, tag];
  if (v !== 1 || Object.keys(rest).length > 0 || !fields.every((f) => typeof f === 'string' && BASE64.test(f))) {
    throw new SnapshotError('the encrypted snapshot is malformed: it is { v: 1, enc, iv, tag } with base64 text, as written. It must be resumed as written.');
  }
  const nonce = Buffer.from(iv as string, 'base64');
  const auth = Buffer.from(tag as string, 'base64');
  if (nonce.length !== 12 || auth.length !== 16) throw new SnapshotError('the encrypted snapshot is malformed: its iv is 12 bytes and its tag 16, as written.');
  try {
    const decipher = createDecipheriv(ALGORITHM, key, nonce).setAAD(AAD).setAuthTag(auth);
    return Buffer.concat([decipher.update(Buffer.from(enc as string, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    throw new SnapshotError(`the encrypted snapshot does not open with agent "${agent}"'s snapshotEncryptionKey: it was altered after it was written, or encrypted with another key. It is not resumed.`);
  }
}

/** The cipher of one key: the key stays in this closure, out of every object a caller can print. */
export function cipherOf(key: KeyObject): SnapshotCipher {
  return { encrypt: (text) => encryptSnapshot(text, key), open: (value, agent) => decryptSnapshot(value, key, agent) };
}

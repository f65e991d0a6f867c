import { createHash, randomUUID } from 'node:crypto';
import { ConfigurationError, SnapshotError } from '../../core/errors.js';
import { checked } from '../../core/options.js';
import type { Logger } from '../../observability/logger.js';
import { isResumeStore, type ResumeStore } from './resume-store.js';
import type { RunSnapshot } from './run-snapshot.js';
import { cipherOf, encryptionKeyOf, ENCRYPTION_KEY_HINT, isEncrypted } from './snapshot-cipher.js';
import type { EncryptedSnapshot, SnapshotEncryptionKey, SnapshotOptions, SnapshotPolicy } from './snapshot-options.js';
import { canonicalJson, checkSignature, checkedSnapshot, sealSnapshot, snapshotValue } from './snapshot-codec.js';


/** The agent options that make the policy, each checked with its fix named. */
export const snapshotOptionParts = {
  snapshotKey: checked<string>((k) => typeof k === 'string' && k.length >= 16, 'snapshotKey must be a secret string of at least 16 characters (it signs snapshots with HMAC-SHA256).').optional(),
  snapshotEncryptionKey: checked<SnapshotEncryptionKey>((k) => encryptionKeyOf(k) !== undefined, ENCRYPTION_KEY_HINT).optional(),
  unsignedSnapshots: checked<boolean>((v) => typeof v === 'boolean', 'unsignedSnapshots must be true or false.').optional(),
  resumeStore: checked<ResumeStore>(isResumeStore, 'resumeStore must be a ResumeStore ({ claim(snapshotId) }), e.g. new InMemoryResumeStore().').optional(),
};


export function snapshotPolicy(agent: string, options: { readonly [K in keyof SnapshotOptions]?: SnapshotOptions[K] | undefined }): SnapshotPolicy {
  const key = options.snapshotEncryptionKey === undefined ? undefined : encryptionKeyOf(options.snapshotEncryptionKey);
  const cipher = key === undefined ? undefined : cipherOf(key);
  if (options.unsignedSnapshots === true && (options.snapshotKey !== undefined || cipher !== undefined)) {
    throw new ConfigurationError(
      `agent "${agent}": unsignedSnapshots: true says its snapshots go unchecked, and ${options.snapshotKey !== undefined ? 'snapshotKey' : 'snapshotEncryptionKey'} says they are checked: give one or the other.`,
    );
  }
  return { key: options.snapshotKey, cipher, unsigned: options.unsignedSnapshots === true, resumeStore: options.resumeStore };
}

/** Whether a snapshot this policy reads cannot be altered unnoticed: signed, or encrypted (GCM authenticates). */
export function isChecked(policy: SnapshotPolicy): boolean {
  return policy.key !== undefined || policy.cipher !== undefined;
}

const FIXES =
  'construct it with snapshotKey (a secret of at least 16 characters: snapshots are signed, and one changed by whoever stored it is refused) ' +
  'or snapshotEncryptionKey (32 bytes: snapshots are encrypted and authenticated), or with unsignedSnapshots: true to accept snapshots anyone who stored them could have changed ' +
  "(then each approval must carry its interruption's inputDigest)";

const warned = new WeakSet<SnapshotPolicy>();

/**
 * The root's snapshot as the caller is handed it: given an id (what a resumeStore claims), signed
 * with the key, encrypted with the encryption key. An agent with neither, not opted in, still
 * answers its snapshot (the work of the turn is done and must not be lost) and says once, in its
 * log, that resume will refuse it until the agent is configured.
 */
export function sealRootSnapshot(policy: SnapshotPolicy, snapshot: RunSnapshot, logger: Logger): RunSnapshot | EncryptedSnapshot {
  const sealed = sealSnapshot({ ...snapshot, id: randomUUID() }, policy.key);
  if (policy.cipher !== undefined) return policy.cipher.encrypt(JSON.stringify(sealed));
  if (!isChecked(policy) && !policy.unsigned && !warned.has(policy)) {
    warned.add(policy);
    logger.warn({ agent: snapshot.agent }, `agent "${snapshot.agent}" suspended with no snapshotKey: resume refuses its snapshots until you ${FIXES}`);
  }
  return sealed;
}

/**
 * The snapshot to resume, opened as the policy says: refused outright by an agent that can check
 * nothing and was not told to accept that; decrypted when encrypted (a plain snapshot is refused
 * by an agent with an encryption key); read and checked (shape, version, root agent, signature).
 */
export function openSnapshot(policy: SnapshotPolicy, input: unknown, agent: string): RunSnapshot {
  if (!isChecked(policy) && !policy.unsigned) throw new ConfigurationError(`agent "${agent}" cannot tell whether a snapshot was changed since it was written: ${FIXES}. Nothing was run.`);
  let value = snapshotValue(input);
  let owned = typeof input === 'string';
  if (isEncrypted(value)) {
    value = snapshotValue(openEncrypted(value, policy, agent));
    owned = true;
  } else if (policy.cipher !== undefined) throw new SnapshotError(`agent "${agent}" has a snapshotEncryptionKey, and this snapshot is not encrypted: only snapshots it encrypted resume.`);
  const snapshot = checkedSnapshot(value, owned);
  if (snapshot.agent !== agent) throw new SnapshotError(`this snapshot is of agent "${snapshot.agent}", not "${agent}": resume it on an agent of that name and roster.`);
  checkSignature(snapshot, policy.key, agent);
  return snapshot;
}

function openEncrypted(value: object, policy: SnapshotPolicy, agent: string): string {
  if (policy.cipher === undefined) {
    throw new SnapshotError(`the snapshot is encrypted, and agent "${agent}" has no snapshotEncryptionKey to open it with: construct it with the key that encrypted it.`);
  }
  return policy.cipher.open(value, agent);
}

/** The id a resumeStore claims: the snapshot's own, else (a snapshot written without one) a digest of its content. */
export function snapshotIdOf(snapshot: RunSnapshot): string {
  return snapshot.id ?? `sha256:${createHash('sha256').update(canonicalJson(snapshot)).digest('hex')}`;
}

/**
 * Claims the snapshot in the policy's resumeStore, if it has one: a snapshot claimed before is
 * refused, nothing run. Undefined when there is no store: nothing to wait for, so a resume
 * without one takes no extra turn of the event loop for it.
 */
export function claimSnapshot(policy: SnapshotPolicy, snapshot: RunSnapshot, agent: string): Promise<void> | undefined {
  return policy.resumeStore === undefined ? undefined : claimIn(policy.resumeStore, snapshotIdOf(snapshot), agent);
}

async function claimIn(store: ResumeStore, id: string, agent: string): Promise<void> {
  let first: boolean;
  try {
    first = await store.claim(id);
  } catch (error) {
    throw new SnapshotError(`agent "${agent}"'s resumeStore could not record the resume of snapshot "${id}" (${(error as Error)?.message ?? String(error)}): nothing was run; try again.`, { cause: error });
  }
  if (first !== true) {
    throw new SnapshotError(`snapshot "${id}" was resumed already (agent "${agent}"'s resumeStore holds its claim): a snapshot resumes once, so nothing was run. If that resume suspended again, resume the snapshot it answered.`);
  }
}

import type { ResumeStore } from './resume-store.js';

/**
 * An encryption key as the agent takes it: 32 bytes as a Uint8Array (a Buffer), 64 hex
 * characters, base64 of 32 bytes, or a secret KeyObject of 32 bytes from node:crypto (described by
 * its shape here, so the public types need no Node type declarations).
 */
export type SnapshotEncryptionKey = string | Uint8Array | { readonly type: string; readonly symmetricKeySize?: number | undefined };

/** The options both agent classes take for the snapshots of their suspended trees. */
export interface SnapshotOptions {
  /** Signs snapshots (HMAC-SHA256); resume then takes only snapshots it signed. */
  snapshotKey?: string;
  /** Encrypts snapshots (AES-256-GCM), so whoever stores them reads nothing; resume then takes only snapshots it encrypted. */
  snapshotEncryptionKey?: SnapshotEncryptionKey;
  /**
   * Resume snapshots nobody can check (no key): whoever stored one could have changed it, so each
   * approval must then carry its interruption's `inputDigest`. Without a key, resume refuses unless this is true.
   */
  unsignedSnapshots?: boolean;
  /** Claims each resumed snapshot, so a second resume of it is refused (e.g. new InMemoryResumeStore()). */
  resumeStore?: ResumeStore;
}

/**
 * A snapshot encrypted with the agent's `snapshotEncryptionKey` (AES-256-GCM): opaque text to
 * whoever stores it. `enc` is the ciphertext of the (signed) snapshot's JSON, `iv` its 12-byte
 * nonce and `tag` its 16-byte authentication tag, all base64. `v` is this envelope's version.
 */
export interface EncryptedSnapshot {
  readonly v: 1;
  readonly enc: string;
  readonly iv: string;
  readonly tag: string;
}

/** Encrypts and opens snapshots with one key (snapshot-cipher.ts): what the policy holds, the key kept inside. */
export interface SnapshotCipher {
  encrypt(text: string): EncryptedSnapshot;
  /** The snapshot's JSON text; a wrong key or an edited ciphertext is a SnapshotError. */
  open(value: object, agent: string): string;
}

/** How an agent writes the snapshots of its suspended trees, and which it resumes (snapshot-policy.ts). */
export interface SnapshotPolicy {
  /** HMAC-SHA256 key: snapshots are signed, and only ones it signed resume. */
  readonly key: string | undefined;
  /** AES-256-GCM: snapshots are encrypted (and so authenticated), and only ones it encrypted resume. */
  readonly cipher: SnapshotCipher | undefined;
  /** The application asked for snapshots nobody can check (`unsignedSnapshots: true`). */
  readonly unsigned: boolean;
  /** Where resumed snapshots are claimed, so each resumes once. */
  readonly resumeStore: ResumeStore | undefined;
}

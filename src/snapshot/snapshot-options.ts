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

import { ConfigurationError } from '../../core/errors.js';

/**
 * Where an agent records the snapshots it resumed, so that one resumes once: `claim` answers true
 * for the first claim of an id and false for every later one, atomically (two resumes racing
 * get one true between them). A store shared by your processes (a database, Redis) makes it
 * hold across them; `InMemoryResumeStore` holds in one process.
 */
export interface ResumeStore {
  claim(snapshotId: string): boolean | Promise<boolean>;
}

/**
 * Claims in this process's memory. It remembers the last `maxEntries` ids (100,000 by default):
 * an id claimed longer ago than that is forgotten, and could be claimed again.
 */
export class InMemoryResumeStore implements ResumeStore {
  readonly #claimed = new Set<string>();
  readonly #max: number;

  constructor(options: { maxEntries?: number } = {}) {
    const max = options.maxEntries ?? 100_000;
    if (!Number.isInteger(max) || max < 1) throw new ConfigurationError(`InMemoryResumeStore: maxEntries must be a whole number of at least 1, not ${String(max)}.`);
    this.#max = max;
  }

  claim(snapshotId: string): boolean {
    if (this.#claimed.has(snapshotId)) return false;
    this.#claimed.add(snapshotId);
    // A Set iterates in insertion order: the first is the oldest claim.
    if (this.#claimed.size > this.#max) this.#claimed.delete(this.#claimed.values().next().value!);
    return true;
  }
}

/** Whether a value can serve as a ResumeStore. */
export function isResumeStore(value: unknown): value is ResumeStore {
  return typeof (value as { claim?: unknown } | null)?.claim === 'function';
}

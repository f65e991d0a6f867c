import { createHmac, timingSafeEqual } from 'node:crypto';
import { SnapshotError } from '../../core/errors.js';
import { SNAPSHOT_VERSION, type RunSnapshot } from './run-snapshot.js';
import { snapshotDefects } from './snapshot-format.js';

/** Runs nested deeper than this are no tree a depth ceiling (at most 32) lets grow: refused before anything reads them. */
const MAX_NESTING = 64;

/** How deep runs nest, walked without recursion: a hostile snapshot must not overflow the stack. */
function nesting(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[(value as { run?: unknown } | null)?.run, 1]];
  while (stack.length > 0) {
    const [run, depth] = stack.pop()!;
    deepest = Math.max(deepest, depth);
    if (depth > MAX_NESTING) return depth;
    const calls = (run as { waits?: { calls?: unknown } } | null)?.waits?.calls;
    if (!Array.isArray(calls)) continue;
    for (const c of calls) {
      const child = (c as { child?: unknown } | null)?.child;
      if (child !== undefined) stack.push([child, depth + 1]);
    }
  }
  return deepest;
}

/** A snapshot given as an object or its JSON text, as an object: text that is not JSON, or JSON that is no object, is a SnapshotError. */
export function snapshotValue(input: unknown): object {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch (error) {
      throw new SnapshotError(`the snapshot is not JSON (${(error as Error).message}): pass the snapshot object, or its JSON text whole (was it cut short?).`);
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new SnapshotError('a snapshot is an object: pass response.snapshot, or its JSON text.');
  return value;
}

/**
 * Reads a snapshot (the object, or its JSON text) and checks it is one this code can resume:
 * version 1, the shape of version 1 exactly, runs nested no deeper than a tree can grow. Each
 * defect is a SnapshotError saying which.
 */
export function readSnapshot(input: unknown): RunSnapshot {
  return checkedSnapshot(snapshotValue(input), typeof input === 'string');
}

/**
 * The checks of readSnapshot on a value already opened; `owned` says it was parsed here from text,
 * so no one else holds it.
 */
export function checkedSnapshot(value: object, owned: boolean): RunSnapshot {
  const version = (value as { version?: unknown }).version;
  if (version !== SNAPSHOT_VERSION) {
    throw new SnapshotError(`this snapshot is of version ${JSON.stringify(version)}, and this symfonic reads version ${SNAPSHOT_VERSION}: resume it with the symfonic version that wrote it.`);
  }
  if (nesting(value) > MAX_NESTING) throw new SnapshotError(`the snapshot's runs are nested more than ${MAX_NESTING} deep, which no delegation tree grows: it is not a snapshot this code wrote.`);
  const defects = snapshotDefects(value);
  if (defects !== undefined) throw new SnapshotError(`the snapshot is malformed: ${defects}. It must be resumed as written (JSON round trips keep it whole).`);
  // A snapshot handed over as an object is copied once it is known sound, in this same step: the
  // run then never shares an object with the caller, who may change theirs while the resume
  // awaits its claim, after the signature was checked. Text parsed here is already our own.
  return (owned ? value : structuredClone(value)) as RunSnapshot;
}

/** JSON with object keys sorted at every level: the same bytes for the same data, whatever order a store kept its keys in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

function mac(key: string, snapshot: RunSnapshot): string {
  const { signature: _unsigned, ...body } = snapshot;
  return createHmac('sha256', key).update(canonicalJson(body)).digest('hex');
}

/** The snapshot, signed with `key` when one is given. */
export function sealSnapshot(snapshot: RunSnapshot, key: string | undefined): RunSnapshot {
  return key === undefined ? snapshot : { ...snapshot, signature: mac(key, snapshot) };
}

/**
 * Checks a snapshot's signature against the agent's key: with a key, an unsigned snapshot, an
 * altered one and one signed with another key are refused; without one, a signed snapshot is
 * refused too (there is nothing to check it with, and it was meant to be checked).
 */
export function checkSignature(snapshot: RunSnapshot, key: string | undefined, agent: string): void {
  if (key === undefined) {
    if (snapshot.signature !== undefined) throw new SnapshotError(`the snapshot is signed, but agent "${agent}" has no snapshotKey to check it with: construct it with the key that signed it.`);
    return;
  }
  if (snapshot.signature === undefined) throw new SnapshotError(`agent "${agent}" has a snapshotKey, and this snapshot is unsigned: only snapshots it signed resume.`);
  const expected = Buffer.from(mac(key, snapshot), 'hex');
  const given = Buffer.from(snapshot.signature, 'hex');
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    throw new SnapshotError(`the snapshot's signature does not match: it was altered after it was written, or signed with another key. It is not resumed.`);
  }
}

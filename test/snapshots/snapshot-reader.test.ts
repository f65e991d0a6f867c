/**
 * The snapshot's reader, written for the format, read against the zod schema it replaced
 * (zod-snapshot-oracle.ts): for real snapshots and every edit of one field, of one object's keys
 * or of two fields at once, it accepts what zod accepted and refuses what zod refused, in the
 * same words (messages, paths, order, which option of a union is blamed).
 */
import { describe, expect, it } from 'vitest';
import { SnapshotError } from '../../src/index.js';
import { readSnapshot } from '../../src/run/snapshot/snapshot-codec.js';
import { KEY_A, payTree, scope } from '../interruptions/helpers.js';
import { zodDefects } from './zod-snapshot-oracle.js';

type Json = Record<string, any>;
const copy = (v: unknown): Json => JSON.parse(JSON.stringify(v));

/** The reader's refusal, in the oracle's terms: the prettified lines, or undefined when it accepts. */
function readerDefects(value: unknown): string | undefined {
  try {
    readSnapshot(value);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(SnapshotError);
    const m = /^the snapshot is malformed: ([\s\S]*)\. It must be resumed as written/.exec((error as Error).message);
    if (m === null) throw error;
    return m[1];
  }
}

/** Real snapshots, and the same edited into the shapes a pay tree does not write (remote wait, model wait, spans, scope attributes). */
async function bases(): Promise<Json[]> {
  const signed = copy((await payTree({ snapshotKey: KEY_A }).boss.run('pay the bill', { scope })).snapshot);
  const plain = copy((await payTree().boss.run('pay the bill', { scope })).snapshot);
  const rich = copy(plain);
  rich.seq = 7;
  rich.givenAgain = { metricsCollector: true };
  rich.run.place.scope = { tenantId: 'acme', userId: 'u-1', sessionId: 's-1', attributes: { plan: 'gold' } };
  rich.run.span = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), flags: 1 };
  rich.run.deadline = 1_900_000_000_000;
  rich.run.delegations = [{ toolCallId: 'c1', child: 'manager', childRunId: null, outcome: 'delegated', output: { any: ['thing'] }, usage: { inputTokens: 1, outputTokens: 2, cacheReadInputTokens: 0, source: 'estimated' }, costUsd: 0.5 }];
  const child = rich.run.waits.calls[0].child;
  child.waits = { remote: { agent: 'far', taskId: 't-1', contextId: 'c-1', interruptions: [{ id: 'w1', kind: 'approval', remoteId: 'r1' }] } };
  child.messages = [];
  const model = copy(plain);
  model.run.waits = { model: { id: 'w2', kind: 'budget', refusal: { tenantId: 'acme', limitName: 'maxTokens', limit: 10, spent: 5, reserved: 1, requested: 9 } } };
  const mixed = copy(plain);
  mixed.run.waits.calls.unshift({ callId: 'c0', result: 'done' }, { callId: 'c00', wait: { id: 'w3', kind: 'approval' } });
  return [signed, plain, rich, model, mixed];
}

/** Every place in a value, as the path to it. */
function places(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  const here = [path];
  if (Array.isArray(value)) value.forEach((v, i) => here.push(...places(v, [...path, i])));
  else if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) here.push(...places(v, [...path, k]));
  return here;
}

function edited(base: Json, path: (string | number)[], edit: (parent: any, key: string | number) => void): Json {
  const out = copy(base);
  if (path.length === 0) return out;
  let parent: any = out;
  for (const seg of path.slice(0, -1)) parent = parent[seg];
  edit(parent, path[path.length - 1]!);
  return out;
}

const REPLACEMENTS: unknown[] = [null, undefined, 'x', '', 'a b', 'x'.repeat(301), 'f'.repeat(64), -1, 0, 1.5, 2 ** 60, -(2 ** 60), 300, NaN, Infinity, true, {}, [], [1], { extra: 1 }, 'approval', 'user'];

/** Each field replaced, each field removed, an extra key on each object, each array emptied. */
function edits(base: Json): Json[] {
  const out: Json[] = [];
  for (const path of places(base)) {
    for (const r of REPLACEMENTS) out.push(edited(base, path, (p, k) => (p[k] = r)));
    out.push(edited(base, path, (p, k) => (Array.isArray(p) ? p.splice(Number(k), 1) : delete p[k])));
    out.push(edited(base, path, (p, k) => typeof p[k] === 'object' && p[k] !== null && !Array.isArray(p[k]) && (p[k].extra = true)));
    out.push(edited(base, path, (p, k) => Array.isArray(p[k]) && (p[k].length = 0)));
  }
  return out;
}

describe("the snapshot's reader against the zod schema it replaced", () => {
  it('accepts the real snapshots and the shapes they can take', async () => {
    for (const s of await bases()) {
      expect(zodDefects(s)).toBeUndefined();
      expect(readerDefects(s)).toBeUndefined();
    }
  });

  it('every single edit: refused when zod refused, in the same words; accepted when zod accepted', { timeout: 60_000 }, async () => {
    let refused = 0;
    let total = 0;
    for (const base of await bases()) {
      for (const s of edits(base)) {
        if (s.version !== 1) continue; // another version is refused before the shape is read
        const expected = zodDefects(s);
        expect(readerDefects(s)).toBe(expected);
        total++;
        if (expected !== undefined) refused++;
      }
    }
    // The edits reach every kind of defect, and some edits are harmless (a field set to what it was).
    expect(refused).toBeGreaterThan(2000);
    expect(total - refused).toBeGreaterThan(50);
  });

  it('two defects at once, in different runs and fields: every one listed, shallowest first', async () => {
    const [signed] = await bases();
    const paths = places(signed).filter((p) => p.length > 1 && p[0] === 'run');
    let checked = 0;
    for (let i = 0; i < paths.length; i += 7) {
      for (let j = i + 3; j < paths.length; j += 11) {
        const [a, b] = [paths[i]!, paths[j]!];
        if (a.every((seg, n) => b[n] === seg)) continue; // the second inside the first: one defect, not two
        const s = edited(edited(signed!, a, (p, k) => (p[k] = 1.5)), b, (p, k) => (p[k] = null));
        expect(readerDefects(s)).toBe(zodDefects(s));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('values no JSON text holds (a Date, a Map, a class instance, an object with no prototype) are named as zod named them', async () => {
    const [plain] = await bases();
    class Holder {
      content = 'x';
    }
    for (const odd of [new Date(0), new Map(), new Holder(), Object.create(null), () => 1, 10n, Symbol('s')]) {
      for (const path of [['agent'], ['run', 'turns'], ['run', 'messages', 0], ['run', 'waits'], ['run', 'place', 'scope']]) {
        const s = edited(plain!, path, (p, k) => (p[k] = odd));
        expect(readerDefects(s)).toBe(zodDefects(s));
      }
    }
  });
});

describe("a defect deep in a tree is read once per level", () => {
  it('a tree nested 60 runs deep with a defect at its leaf: refused in the words zod used, without reading any level twice over', { timeout: 20_000 }, async () => {
    const [plain] = await bases();
    const childCall = plain!.run.waits.calls[0];
    const leaf: Json = copy(childCall.child);
    leaf.turns = -1;
    // The leaf's reads of `turns` are counted while the reader reads: read twice per level, 60
    // levels would read it 2^60 times; the count fails the test at once, not a clock.
    let leafReads = 0;
    let counting = true;
    let run: Json = new Proxy(leaf, {
      get(target, key, receiver) {
        if (counting && key === 'turns' && ++leafReads > 4) throw new Error(`the leaf run was read ${leafReads} times: a level is read more than once`);
        return Reflect.get(target, key, receiver);
      },
    });
    for (let i = 0; i < 60; i++) run = { ...copy(childCall.child), runId: `r${i}`, waits: { calls: [{ callId: childCall.child.waits.calls[0].callId, child: run }] } };
    const deep = { ...plain!, run: { ...plain!.run, waits: { calls: [{ callId: childCall.callId, child: run }] } } };
    const message = readerDefects(deep);
    counting = false;
    expect(leafReads).toBeGreaterThan(0);
    expect(message).toMatch(/Too small: expected number to be >=0\n {2}→ at run\.waits\.calls\[0\]\.child(\.waits\.calls\[0\]\.child){60}\.turns$/);
    expect(message).toBe(zodDefects(deep));
  });
});

/**
 * What resume refuses before anything runs: snapshots altered, unsigned, signed with another key
 * or with none expected, of another version or another root agent, cut short, nested past any
 * tree, or colliding with a live run; and what it accepts: a snapshot that went through JSON and
 * a store that reorders keys, and a 10 MB conversation. Never a crash or a hang: each test has a
 * timeout of its own.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, DuplicateRunError, FacadeChild, MetricsCollector, SnapshotError, SubAgent, SymfonicAgent, defineTool, type ChildAgent, type ChildRunOptions, type Message, type ModelProvider, type RunSnapshot } from '../../src/index.js';
import { remoteChild } from '../../src/remote/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { KEY_A, KEY_B, decideAll, modelCalls, payTree, scope, type PayTree } from './helpers.js';

const T = { timeout: 20_000 };

/** A suspended pay tree's response, from agents built with `key`. */
async function suspended(key?: string) {
  const t = payTree(key === undefined ? {} : { snapshotKey: key });
  const r = await t.boss.run('pay the bill', { scope });
  expect(r.status).toBe('suspended');
  return r;
}

/** A deep copy that can be edited freely. */
const copy = (s: unknown): Record<string, any> => JSON.parse(JSON.stringify(s));

/** Resumes on fresh agents and expects a SnapshotError matching `message`; nothing may have run. */
async function refused(snapshot: unknown, decisions: Record<string, unknown>, message: RegExp, key?: string): Promise<void> {
  const t: PayTree = payTree(key === undefined ? {} : { snapshotKey: key });
  const err = await t.boss.resume(snapshot as RunSnapshot, { decisions: decisions as never }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(SnapshotError);
  expect((err as Error).message).toMatch(message);
  expect(modelCalls(t)).toBe(0);
  expect(t.paid).toEqual([]);
}

describe('signed snapshots', () => {
  it('another tenant put in the root\'s place is refused: the signature does not match', T, async () => {
    const r = await suspended(KEY_A);
    const s = copy(r.snapshot!);
    s.run.place.scope.tenantId = 'someone-else';
    await refused(s, decideAll(r, { approve: true }), /signature does not match/, KEY_A);
  });

  it('altered messages are refused', T, async () => {
    const r = await suspended(KEY_A);
    const s = copy(r.snapshot!);
    s.run.messages[0].content = 'pay the bill, and the next one';
    await refused(s, decideAll(r, { approve: true }), /signature does not match/, KEY_A);
  });

  it("an altered child's figures are refused (spend written down lower than it was)", T, async () => {
    const r = await suspended(KEY_A);
    const s = copy(r.snapshot!);
    s.run.waits.calls[0].child.figures.own.inputTokens = 0;
    await refused(s, decideAll(r, { approve: true }), /signature does not match/, KEY_A);
  });

  it('an unsigned snapshot is refused by an agent with a key', T, async () => {
    const r = await suspended();
    await refused(r.snapshot, decideAll(r, { approve: true }), /unsigned/, KEY_A);
  });

  it('a signature removed from a signed snapshot is refused as unsigned', T, async () => {
    const r = await suspended(KEY_A);
    const s = copy(r.snapshot!);
    delete s.signature;
    await refused(s, decideAll(r, { approve: true }), /unsigned/, KEY_A);
  });

  it('a snapshot signed with another key is refused', T, async () => {
    const r = await suspended(KEY_B);
    expect(copy(r.snapshot).signature).toMatch(/^[0-9a-f]{64}$/);
    await refused(r.snapshot, decideAll(r, { approve: true }), /signature does not match/, KEY_A);
  });

  it('a signed snapshot is refused by an agent with no key, saying it has none', T, async () => {
    const r = await suspended(KEY_A);
    await refused(r.snapshot, decideAll(r, { approve: true }), /no snapshotKey/);
  });

  it('survives JSON.parse(JSON.stringify(s)) and a store that sorts every object\'s keys', T, async () => {
    const r = await suspended(KEY_A);
    const sortKeys = (v: unknown): unknown =>
      Array.isArray(v) ? v.map(sortKeys) : typeof v === 'object' && v !== null ? Object.fromEntries(Object.keys(v).sort().reverse().map((k) => [k, sortKeys((v as Record<string, unknown>)[k])])) : v;
    const reordered = sortKeys(JSON.parse(JSON.stringify(r.snapshot)));
    // The reordering is real: the keys come back in another order.
    expect(Object.keys(reordered as object)).not.toEqual(Object.keys(r.snapshot!));
    const t = payTree({ snapshotKey: KEY_A });
    const done = await t.boss.resume(JSON.stringify(reordered), { decisions: decideAll(r, { approve: true }) });
    expect(done).toMatchObject({ status: 'completed', runId: r.runId });
    expect(t.paid).toEqual([42]);
  });
});

describe('snapshots refused whatever the key', () => {
  it('another version, naming the versions', T, async () => {
    const r = await suspended();
    const s = copy(r.snapshot!);
    s.version = 2;
    await refused(s, decideAll(r, { approve: true }), /version 2.*reads version 1/);
  });

  it('another version, with a key: refused for the version, not the signature', T, async () => {
    const r = await suspended(KEY_A);
    const s = copy(r.snapshot!);
    s.version = 0;
    await refused(s, decideAll(r, { approve: true }), /version 0/, KEY_A);
  });

  it('another root agent name', T, async () => {
    const r = await suspended();
    const s = copy(r.snapshot!);
    s.agent = 'intruder';
    await refused(s, decideAll(r, { approve: true }), /agent "intruder", not "boss"/);
  });

  it('JSON text cut short', T, async () => {
    const r = await suspended();
    const text = JSON.stringify(r.snapshot);
    await refused(text.slice(0, Math.floor(text.length / 2)), decideAll(r, { approve: true }), /not JSON.*cut short/);
    await refused('', decideAll(r, { approve: true }), /not JSON/);
  });

  it('not an object at all', T, async () => {
    const r = await suspended();
    for (const bad of [null, 42, [], 'null']) await refused(bad, decideAll(r, { approve: true }), /a snapshot is an object/);
  });

  it('a field the format does not have, naming where', T, async () => {
    const r = await suspended();
    const s = copy(r.snapshot!);
    s.run.waits.calls[0].child.extra = true;
    await refused(s, decideAll(r, { approve: true }), /malformed[\s\S]*run\.waits/);
  });

  it("a waiting call that is not the run's last turn", T, async () => {
    const r = await suspended();
    const s = copy(r.snapshot!);
    s.run.waits.calls[0].callId = 'call_elsewhere';
    await refused(s, decideAll(r, { approve: true }), /not its last turn/);
  });

  it('a child renamed in the roster, naming it and the roster here', T, async () => {
    const r = await suspended();
    const s = copy(r.snapshot!);
    const call = s.run.messages[1].toolCalls[0];
    call.arguments = JSON.stringify({ name: 'accountant', task: 'get the bill paid' });
    await refused(s, decideAll(r, { approve: true }), /"accountant".*its children: "manager"/);
  });

  // The name is not enough: an entry that can no longer go on from a snapshot (now behind a
  // wrapper of the user's, or remote) would start the child afresh under its old run id, its
  // first model call made and charged again and the approval dropped.
  it('a suspended child whose roster entry can no longer resume is refused before anything runs', T, async () => {
    const t = payTree();
    const r = await t.manager.run('pay the bill', { scope });
    expect(r.interruptions.map((i) => i.agent)).toEqual(['clerk']);
    const fresh = payTree();
    const wrapped: ChildAgent = { run: (task: string, options: ChildRunOptions) => fresh.clerk.run(task, options) };
    const manager = new SymfonicAgent({ name: 'manager', unsignedSnapshots: true, modelProvider: fresh.models.manager, subAgents: [new SubAgent({ name: 'clerk', agent: wrapped, description: 'Pays bills.' })] });
    const err = await manager.resume(JSON.stringify(r.snapshot), { decisions: decideAll(r, { approve: true }) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SnapshotError);
    const clerkRunId = r.interruptions[0]!.runId;
    expect((err as Error).message).toContain(`child run "${clerkRunId}" of "clerk" (a child of "manager") cannot go on here`);
    expect((err as Error).message).toMatch(/roster it was written with/);
    expect(modelCalls(fresh)).toBe(0);
    expect(fresh.paid).toEqual([]);
  });

  it('a suspended child now a remote agent under the same name is refused before anything runs', T, async () => {
    const t = payTree();
    const r = await t.boss.run('pay the bill', { scope });
    const fresh = payTree();
    // Nothing listens there: the refusal must come before any call is tried.
    const boss = new SymfonicAgent({ name: 'boss', unsignedSnapshots: true, modelProvider: fresh.models.boss, subAgents: [remoteChild({ name: 'manager', url: 'http://127.0.0.1:9/', description: 'Gets things done.' })] });
    const err = await boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SnapshotError);
    expect((err as Error).message).toMatch(/of "manager" is not the remote task it was: "manager" here is a remote child, and the snapshot's run is a local one/);
    expect(modelCalls(fresh)).toBe(0);
  });

  it('a symfonic facade behind FacadeChild still resumes; a foreign facade there does not', T, async () => {
    let ran = 0;
    const wire = defineTool({ name: 'wire', description: 'Wires money.', input: z.object({}), needsApproval: true, execute: () => (ran++, 'wired') });
    const teller = () => new Agent({ name: 'teller', modelProvider: scriptedModel((req) => (req.messages.some((m) => m.role === 'tool') ? 'wired it' : { toolCalls: [{ name: 'wire', arguments: {} }] })), tools: [wire] });
    const desk = (child: unknown) =>
      new SymfonicAgent({
        name: 'desk',
        unsignedSnapshots: true,
        modelProvider: scriptedModel((req) => (req.messages.some((m) => m.role === 'tool') ? 'done' : { toolCalls: [{ name: 'run_agent', arguments: { name: 'teller', task: 'wire it' } }] })),
        subAgents: [new SubAgent({ name: 'teller', agent: child as ChildAgent, description: 'Wires money.' })],
      });
    const r = await desk(new FacadeChild(teller())).run('wire the money', { scope });
    expect(r.status).toBe('suspended');
    const done = await desk(new FacadeChild(teller())).resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) });
    expect(done.finalResponse).toBe('done');
    expect(ran).toBe(1);
    const foreign = { run: async () => ({ text: 'wired, I promise' }) };
    const err = await desk(new FacadeChild(foreign)).resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SnapshotError);
    expect(ran).toBe(1);
  });

  it('runs nested 10,000 deep (as text and as an object): refused without overflowing the stack', T, async () => {
    const r = await suspended();
    const base = copy(r.snapshot!);
    const leafRun = base.run.waits.calls[0].child.waits.calls[0].child;
    let chain: Record<string, unknown> = leafRun;
    for (let i = 0; i < 10_000; i++) {
      chain = { ...base.run.waits.calls[0].child, runId: `r${i}`, waits: { calls: [{ callId: base.run.waits.calls[0].child.waits.calls[0].callId, child: chain }] } };
    }
    const deep = { ...base, run: { ...base.run, waits: { calls: [{ callId: base.run.waits.calls[0].callId, child: chain }] } } };
    await refused(deep, decideAll(r, { approve: true }), /nested more than 64 deep/);
    // The text is built by hand: JSON.stringify itself recurses, and would overflow here first.
    // Each level is a run whose last key is its waits, left open on its one child call.
    const opening = (run: Record<string, any>, runId: string) => {
      const { waits, ...rest } = run;
      return JSON.stringify({ ...rest, runId }).slice(0, -1) + `,"waits":{"calls":[{"callId":${JSON.stringify(waits.calls[0].callId)},"child":`;
    };
    const { run: _run, ...envelope } = base;
    const text =
      JSON.stringify(envelope).slice(0, -1) + ',"run":' +
      opening(base.run, base.run.runId) +
      Array.from({ length: 10_000 }, (_, i) => opening(base.run.waits.calls[0].child, `r${i}`)).join('') +
      JSON.stringify(leafRun) +
      '}]}}'.repeat(10_001) +
      '}';
    expect(() => JSON.parse(text)).not.toThrow();
    await refused(text, decideAll(r, { approve: true }), /nested more than 64 deep/);
  });

  it('a snapshot object that refers to itself is refused, not walked forever', T, async () => {
    const r = await suspended();
    const s = copy(r.snapshot!);
    s.run.waits.calls[0].child = s.run;
    await refused(s, decideAll(r, { approve: true }), /nested more than 64 deep/);
  });
});

describe('large and colliding resumes', () => {
  it('10 MB of messages is handled: the tree resumes with the conversation whole', T, async () => {
    const t = payTree();
    const big = 'x'.repeat(10 * 1024 * 1024);
    const r = await t.boss.run(big, { scope });
    const text = JSON.stringify(r.snapshot);
    expect(text.length).toBeGreaterThan(10 * 1024 * 1024);
    const again = payTree();
    const done = await again.boss.resume(text, { decisions: decideAll(r, { approve: true }) });
    expect(done.status).toBe('completed');
    expect(again.models.boss.calls[0]!.messages[0]!.content).toHaveLength(big.length);
  });

  it('10 MB of messages in a signed snapshot verifies and resumes', T, async () => {
    const t = payTree({ snapshotKey: KEY_A });
    const r = await t.boss.run('y'.repeat(10 * 1024 * 1024), { scope });
    const done = await payTree({ snapshotKey: KEY_A }).boss.resume(JSON.stringify(r.snapshot), { decisions: decideAll(r, { approve: true }) });
    expect(done.status).toBe('completed');
  });

  it('resumed while the same tree still runs: refused with DuplicateRunError; the running one completes', T, async () => {
    const collector = new MetricsCollector();
    const t = payTree({ collector });
    const r = await t.boss.run('pay the bill', { scope });
    // The first resume is held inside the approved tool until the second has been tried.
    let release!: () => void;
    const slow = payTree({ collector, payGate: new Promise<void>((resolve) => (release = resolve)) });
    const first = slow.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(collector.openRuns).toBe(3);
    // The second, on the same ledger, while the first is open.
    const err = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) }).catch((e: unknown) => e);
    release();
    expect(err).toBeInstanceOf(DuplicateRunError);
    expect((err as Error).message).toContain(r.runId);
    const done = await first;
    expect(done.status).toBe('completed');
    expect([...slow.paid, ...t.paid]).toEqual([42]);
    expect(collector.openRuns).toBe(0);
  });
});

describe('a snapshot this code wrote reads back', () => {
  const wire = defineTool({ name: 'wire', description: 'Wires money.', input: z.object({}), needsApproval: true, execute: () => 'wired' });

  it("from a provider of the user's whose tool calls carry fields of their own", T, async () => {
    // A provider written against a vendor SDK often passes its tool-call objects through as they come.
    const provider: ModelProvider = {
      providerName: 'mine',
      modelName: 'mine-1',
      async generate(req) {
        const answered = req.messages.some((m) => m.role === 'tool');
        const call = { id: 'c1', name: 'wire', arguments: '{}', type: 'function', index: 0 };
        return answered ? { text: 'done', toolCalls: [], finishReason: 'stop' } : { text: '', toolCalls: [call], finishReason: 'tool_calls' };
      },
    };
    const make = () => new SymfonicAgent({ name: 'teller', modelProvider: provider, tools: [wire], unsignedSnapshots: true });
    const r = await make().run('wire it', { scope });
    expect(r.status).toBe('suspended');
    const done = await make().resume(JSON.stringify(r.snapshot), { decisions: decideAll(r, { approve: true }) });
    expect(done.finalResponse).toBe('done');
  });

  it("from a facade run whose history messages carry fields of their own", T, async () => {
    const provider: ModelProvider = {
      providerName: 'mine',
      modelName: 'mine-1',
      async generate(req) {
        const answered = req.messages.some((m) => m.role === 'tool');
        return answered ? { text: 'done', toolCalls: [], finishReason: 'stop' } : { text: '', toolCalls: [{ id: 'c1', name: 'wire', arguments: '{}' }], finishReason: 'tool_calls' };
      },
    };
    const make = () => new Agent({ name: 'teller', modelProvider: provider, tools: [wire], unsignedSnapshots: true });
    const history: Message[] = [{ role: 'user', content: 'earlier', name: 'bob' } as Message, { role: 'assistant', content: 'noted' }];
    const r = await make().run('wire it', { history });
    expect(r.status).toBe('suspended');
    const done = await make().resume(JSON.stringify(r.snapshot), { decisions: decideAll(r, { approve: true }) });
    expect(done.text).toBe('done');
  });
});

/**
 * Approvals anywhere in the tree: a grandchild's tool that needs approval suspends the whole tree
 * with the call's lineage; approved, it runs once and the answer flows up under the same run ids;
 * declined, the model reads why and the tool never runs; two calls waiting at once are decided in
 * one resume while the turn's other calls keep the results they had.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, MetricsCollector, OutputValidationError, SubAgent, SymfonicAgent, defineTool, type ChildAgent, type ChildRunOptions, type Interruption } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { z } from 'zod';
import { approving, decideAll, payTree, plain, runAgent, scope, toolResults } from './helpers.js';

describe('an approval at depth 2', () => {
  it('suspends the root with the call and its lineage; the tool does not run', async () => {
    const t = payTree();
    const r = await t.boss.run('pay the bill', { scope });

    expect(r.status).toBe('suspended');
    expect(r.finalResponse).toBe('');
    expect(t.paid).toEqual([]);
    expect(r.interruptions).toHaveLength(1);
    const i = r.interruptions[0]!;
    expect(i).toMatchObject({ kind: 'approval', rootRunId: r.runId, agent: 'clerk', depth: 2, tool: 'pay', input: { amount: 42 } });
    expect(i.runId).not.toBe(r.runId);
    expect(i.parentRunId).not.toBe(r.runId);
    expect(i.parentRunId).not.toBe(i.runId);
    // The call id is the one the clerk's model made, in the conversation the snapshot holds.
    type Run = { runId: string; messages: { toolCalls?: { id: string }[] }[]; waits: { calls: { child: Run }[] } };
    const manager = (JSON.parse(JSON.stringify(r.snapshot)) as { run: Run }).run.waits.calls[0]!.child;
    const clerkRun = manager.waits.calls[0]!.child;
    expect(clerkRun.runId).toBe(i.runId);
    expect(manager.messages.at(-1)!.toolCalls![0]!.id).not.toBe(i.callId);
    expect(clerkRun.messages.at(-1)!.toolCalls![0]!.id).toBe(i.callId);
    expect(r.snapshot).not.toBeNull();
    expect(plain(r.snapshot).version).toBe(1);
    expect(plain(r.snapshot).agent).toBe("boss");
    // Each model was called once: nobody went on past the waiting call.
    expect([t.models.boss.calls.length, t.models.manager.calls.length, t.models.clerk.calls.length]).toEqual([1, 1, 1]);
  });

  it('the interruption names the manager run as its parent, as the spans of the tree do', async () => {
    const t = payTree();
    const seen: Interruption[] = [];
    const r = await t.boss.run('pay the bill', { scope, onEvent: (e) => e.type === 'run.suspended' && e.agent === 'manager' && seen.push(...e.interruptions) });
    const managerSuspended = seen[0]!;
    expect(managerSuspended).toBeDefined();
    // The manager run's own suspension event carries the same interruption, and the manager is
    // the run that the clerk's interruption names as parent.
    expect(managerSuspended.id).toBe(r.interruptions[0]!.id);
    const managerRunIds = new Set<string>();
    await t.boss.resume(r.snapshot!, {
      decisions: decideAll(r, { approve: true }),
      onEvent: (e) => {
        if (e.agent === 'manager' && e.type === 'run.resumed') managerRunIds.add(e.runId);
      },
    });
    expect([...managerRunIds]).toEqual([r.interruptions[0]!.parentRunId]);
  });

  it('approved, the tool runs once, the tree completes under the same run ids and the answer flows up', async () => {
    const t = payTree();
    const r = await t.boss.run('pay the bill', { scope });
    const i = r.interruptions[0]!;
    const ids: Record<string, Set<string>> = { boss: new Set(), manager: new Set(), clerk: new Set() };
    const done = await t.boss.resume(r.snapshot!, {
      decisions: { [i.id]: approving(i) },
      onEvent: (e) => void ids[e.agent]?.add(e.runId),
    });

    expect(done.status).toBe('completed');
    expect(t.paid).toEqual([42]);
    expect(done.finalResponse).toBe('boss: manager: clerk: paid 42');
    expect(done.interruptions).toEqual([]);
    expect(done.snapshot).toBeNull();
    expect(done.runId).toBe(r.runId);
    expect(done.rootRunId).toBe(r.runId);
    expect(done.parentRunId).toBeNull();
    expect([...ids.boss!]).toEqual([r.runId]);
    expect([...ids.clerk!]).toEqual([i.runId]);
    expect([...ids.manager!]).toEqual([i.parentRunId]);
    expect(done.delegatedTo).toEqual(['manager']);
    // Each model was called twice in all: once before the pause, once after.
    expect([t.models.boss.calls.length, t.models.manager.calls.length, t.models.clerk.calls.length]).toEqual([2, 2, 2]);
    // The clerk's model read the tool's result, under the call id it made.
    const clerkRead = t.models.clerk.calls[1]!.messages.at(-1)!;
    expect(clerkRead).toEqual({ role: 'tool', toolCallId: i.callId, content: 'paid 42' });
  });

  it('resumes on agents that never saw the run (same names and roster), as another process would', async () => {
    const first = payTree();
    const r = await first.boss.run('pay the bill', { scope });
    const text = JSON.stringify(r.snapshot);
    const second = payTree();
    const done = await second.boss.resume(text, { decisions: decideAll(r, { approve: true }) });
    expect(done).toMatchObject({ status: 'completed', runId: r.runId, finalResponse: 'boss: manager: clerk: paid 42' });
    expect(first.paid).toEqual([]);
    expect(second.paid).toEqual([42]);
    // The second tree's models continued the conversations: none was asked for a first turn.
    expect(second.models.clerk.calls.map((c) => toolResults(c))).toEqual([['paid 42']]);
    expect(second.models.boss.calls).toHaveLength(1);
  });

  it('a needsApproval function decides per call, from the validated input and the tool context', async () => {
    const asked: { amount: number; runId: string; depth: number }[] = [];
    const t = payTree({
      clerkCalls: [
        { name: 'pay', arguments: { amount: 5 } },
        { name: 'pay', arguments: { amount: 500 } },
      ],
      needsApproval: (input, ctx) => {
        asked.push({ amount: input.amount, runId: ctx.runId, depth: ctx.agentDepth });
        return input.amount > 100;
      },
    });
    const r = await t.boss.run('pay the bills', { scope });
    expect(r.status).toBe('suspended');
    expect(r.interruptions.map((i) => i.input)).toEqual([{ amount: 500 }]);
    expect(t.paid).toEqual([5]);
    expect(asked.map((a) => [a.amount, a.depth])).toEqual([
      [5, 2],
      [500, 2],
    ]);
    expect(asked[0]!.runId).toBe(r.interruptions[0]!.runId);
    const done = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) });
    expect(t.paid).toEqual([5, 500]);
    // The rule is not asked again for the approved call: the decision is the approval.
    expect(asked).toHaveLength(2);
    expect(done.finalResponse).toBe('boss: manager: clerk: paid 5 + paid 500');
  });
});

describe('two interruptions at once', () => {
  it('two calls of one turn wait; the turn\'s other call finishes, keeps its result and is not run again; one resume decides both', async () => {
    const t = payTree({
      clerkCalls: [
        { name: 'pay', arguments: { amount: 1 } },
        { name: 'lookup', arguments: { account: 'A-1' } },
        { name: 'pay', arguments: { amount: 2 } },
      ],
    });
    const r = await t.boss.run('pay both', { scope });
    expect(r.status).toBe('suspended');
    expect(r.interruptions.map((i) => [i.tool, i.input])).toEqual([
      ['pay', { amount: 1 }],
      ['pay', { amount: 2 }],
    ]);
    expect(new Set(r.interruptions.map((i) => i.id)).size).toBe(2);
    expect(t.looked).toEqual(['A-1']);
    expect(t.paid).toEqual([]);

    const [first, second] = r.interruptions;
    const done = await t.boss.resume(r.snapshot!, { decisions: { [first!.id]: approving(first!), [second!.id]: { approve: false, reason: 'over the limit' } } });
    expect(done.status).toBe('completed');
    expect(t.looked).toEqual(['A-1']);
    expect(t.paid).toEqual([1]);
    // Results in call order: the approved one ran, the finished one kept its result, the declined one says why.
    const read = toolResults(t.models.clerk.calls[1]!);
    expect(read[0]).toBe('paid 1');
    expect(read[1]).toBe('account A-1 is open');
    expect(read[2]).toContain('over the limit');
    expect(read[2]).not.toContain('paid');
  });

  it('two children of one turn, each with a waiting grandchild call: both interruptions, both decided at once', async () => {
    const t = payTree({ managerCalls: [runAgent('clerk', 'pay 42'), runAgent('clerk', 'pay 42 again')] });
    const r = await t.boss.run('pay twice', { scope });
    expect(r.status).toBe('suspended');
    expect(r.interruptions).toHaveLength(2);
    const [a, b] = r.interruptions;
    // Two clerk runs, siblings under the same manager run.
    expect(a!.runId).not.toBe(b!.runId);
    expect(a!.parentRunId).toBe(b!.parentRunId);
    expect(r.interruptions.every((i) => i.depth === 2 && i.agent === 'clerk')).toBe(true);
    const done = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) });
    expect(done.status).toBe('completed');
    expect(t.paid).toEqual([42, 42]);
    expect(done.finalResponse).toBe('boss: manager: clerk: paid 42 + clerk: paid 42');
  });

  it('a delegation that finished beside a suspended one keeps its answer: that child is not run again', async () => {
    const t = payTree({
      managerCalls: [runAgent('clerk', 'pay 42'), runAgent('clerk', 'just look')],
      clerkCalls: (task) => (task === 'just look' ? [{ name: 'lookup', arguments: { account: 'B-2' } }] : [{ name: 'pay', arguments: { amount: 42 } }]),
    });
    const r = await t.boss.run('pay and look', { scope });
    expect(r.interruptions).toHaveLength(1);
    // The looking clerk answered before the pause: two model calls of its own, and the paying clerk's one.
    expect(t.models.clerk.calls).toHaveLength(3);
    expect(t.looked).toEqual(['B-2']);
    const done = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) });
    expect(done.status).toBe('completed');
    expect(t.paid).toEqual([42]);
    expect(t.looked).toEqual(['B-2']);
    // Only the paying clerk went on: one more clerk call in all.
    expect(t.models.clerk.calls).toHaveLength(4);
    expect(done.finalResponse).toBe('boss: manager: clerk: paid 42 + clerk: account B-2 is open');
  });
});

describe('a declined call', () => {
  it('the model reads a tool message with the reason; the tool never ran', async () => {
    const t = payTree();
    const r = await t.boss.run('pay the bill', { scope });
    const done = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: false, reason: 'the invoice is a duplicate' }) });
    expect(done.status).toBe('completed');
    expect(t.paid).toEqual([]);
    const read = t.models.clerk.calls[1]!.messages.at(-1)!;
    expect(read.role).toBe('tool');
    expect(read.toolCallId).toBe(r.interruptions[0]!.callId);
    expect(read.content).toContain('the invoice is a duplicate');
    expect(read.content).toMatch(/declined/);
    expect(done.finalResponse).toBe(`boss: manager: clerk: ${read.content}`);
  });

  it('declined without a reason, the model still reads that it was declined', async () => {
    const t = payTree();
    const r = await t.boss.run('pay the bill', { scope });
    await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: false }) });
    const read = t.models.clerk.calls[1]!.messages.at(-1)!;
    expect(read.content).toMatch(/declined/);
    expect(t.paid).toEqual([]);
  });
});

describe('an approval at the root itself', () => {
  it('suspends with depth 0 and no parent; approved, it runs', async () => {
    let ran = 0;
    const wire = defineTool({ name: 'wire', description: 'Wires money.', input: z.object({ to: z.string() }), needsApproval: true, execute: ({ to }) => (ran++, `wired to ${to}`) });
    const make = () =>
      new SymfonicAgent({
        name: 'teller',
        modelProvider: scriptedModel((req) => (toolResults(req).length === 0 ? { toolCalls: [{ name: 'wire', arguments: { to: 'Bob' } }] } : `done: ${toolResults(req)[0]}`)),
        tools: [wire],
        metricsCollector: new MetricsCollector(),
        unsignedSnapshots: true,
      });
    const r = await make().run('wire Bob', { scope });
    expect(r.interruptions).toEqual([
      { id: expect.any(String), kind: 'approval', runId: r.runId, rootRunId: r.runId, parentRunId: null, agent: 'teller', depth: 0, tool: 'wire', callId: expect.any(String), input: { to: 'Bob' }, inputDigest: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
    expect(ran).toBe(0);
    const done = await make().resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) });
    expect(done.finalResponse).toBe('done: wired to Bob');
    expect(ran).toBe(1);
  });
});

describe('a run that cannot be resumed cannot suspend', () => {
  it('inside a wrapped child, a call that needs approval gets a tool message and does not run', async () => {
    const t = payTree();
    // The user's own code around the clerk: the wrapper cannot be resumed.
    const wrapped: ChildAgent = { run: (task: string, options: ChildRunOptions) => t.clerk.run(task, options) };
    const manager = new SymfonicAgent({ name: 'manager', modelProvider: t.models.manager, subAgents: [new SubAgent({ name: 'clerk', agent: wrapped, description: 'Pays bills.' })] });
    const r = await manager.run('get it paid', { scope });
    expect(r.status).toBe('completed');
    expect(t.paid).toEqual([]);
    expect(t.models.clerk.calls[1]!.messages.at(-1)!.content).toMatch(/cannot wait/);
  });

  // Only the run through the child door can be resumed, so a run below a wrapper (and its
  // subtree) never suspends: the call gets the 'cannot wait' message and the tree completes.
  it('below a wrapped child, a grandchild call that needs approval gets a message and never runs', async () => {
    const t = payTree();
    const wrappedManager: ChildAgent = { run: (task: string, options: ChildRunOptions) => t.manager.run(task, options) };
    const boss = new SymfonicAgent({ name: 'boss', modelProvider: t.models.boss, subAgents: [new SubAgent({ name: 'manager', agent: wrappedManager, description: 'Gets things done.' })] });
    const r = await boss.run('pay the bill', { scope });
    expect(r.status).toBe('completed');
    expect(t.paid).toEqual([]);
  });
});

describe("the root's run options across the pause", () => {
  // A schema is not data: the snapshot records that the root was given one, and resume takes it
  // again (ResumeOptions.outputType), or refuses before anything runs.
  const wire = (ran: { n: number }) => defineTool({ name: 'wire', description: 'Wires money.', input: z.object({}), needsApproval: true, execute: () => (ran.n++, 'wired') });
  const teller = (ran: { n: number }, answer = '{"ok":true}') =>
    new SymfonicAgent({
      name: 'teller',
      tools: [wire(ran)],
      unsignedSnapshots: true,
      modelProvider: scriptedModel((req) => (toolResults(req).length > 0 ? answer : { toolCalls: [{ name: 'wire', arguments: {} }] })),
    });
  const Out = z.object({ ok: z.boolean() });

  it('a root run given an outputType answers its validated output after the resume', async () => {
    const ran = { n: 0 };
    const r = await teller(ran).run('wire it', { scope, outputType: Out });
    expect(r.status).toBe('suspended');
    const done = await teller(ran).resume(JSON.stringify(r.snapshot), { decisions: decideAll(r, { approve: true }), outputType: Out });
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({ ok: true });
    expect(ran.n).toBe(1);
  });

  it('the answer after the resume is validated against the schema given', async () => {
    const ran = { n: 0 };
    const r = await teller(ran).run('wire it', { scope, outputType: Out });
    const err = await teller(ran, '{"ok":"yes"}').resume(r.snapshot!, { decisions: decideAll(r, { approve: true }), outputType: Out }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutputValidationError);
  });

  it('a resume without the outputType the root was given is refused, naming the option, and nothing runs', async () => {
    const ran = { n: 0 };
    const r = await teller(ran).run('wire it', { scope, outputType: Out });
    const again = teller(ran);
    const err = await again.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toMatch(/was run with an outputType[\s\S]*agent\.resume\(snapshot, \{ decisions, outputType \}\)/);
    expect(ran.n).toBe(0);
  });

  it('an outputType that is not a zod schema is refused by name', async () => {
    const ran = { n: 0 };
    const r = await teller(ran).run('wire it', { scope, outputType: Out });
    const err = await teller(ran).resume(r.snapshot!, { decisions: decideAll(r, { approve: true }), outputType: { ok: 'boolean' } as never }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toMatch(/outputType must be a zod schema/);
    expect(ran.n).toBe(0);
  });
});

/**
 * assertLineage and delegationTree over real recorded runs, and assertLineage over span sets
 * broken one invariant at a time: a checker that passes everything proves nothing, so each
 * invariant is shown to be caught, by name, naming the run that broke it.
 */
import { describe, expect, it } from 'vitest';
import { SubAgent, SymfonicAgent } from '../../src/index.js';
import { toSpanRecords } from '../../src/trace/run-tree.js';
import {
  assertLineage,
  checkLineage,
  delegationTree,
  LineageError,
  scriptedModel,
  type RunNode,
  type SpanRecord,
} from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { pricedCollector, ROOT_QUERY, threeLevelTree, USAGE } from './helpers.js';

const rec = recordEachTest();

/** A span record whose attributes a test may break. */
type Editable = Omit<SpanRecord, 'attributes'> & { attributes: Record<string, unknown> };

/** Runs the three-level tree and returns its spans as independent, mutable records. */
async function recordedTree(tenantId = 'acme') {
  const { assistant } = threeLevelTree({ collector: pricedCollector() });
  const response = await assistant.run(ROOT_QUERY, { scope: { tenantId } });
  const records: Editable[] = toSpanRecords(rec.spans()).map((r) => ({ ...r, attributes: { ...r.attributes } }));
  const run = (agent: string) => {
    const s = records.find((r) => r.name === `invoke_agent ${agent}`);
    if (!s) throw new Error(`no invoke_agent ${agent}`);
    return s;
  };
  const ids = { assistant: run('assistant').attributes['symfonic.run_id'] as string, researcher: run('researcher').attributes['symfonic.run_id'] as string, fetcher: run('fetcher').attributes['symfonic.run_id'] as string };
  return { response, records, run, ids };
}

/** assertLineage must throw a LineageError with a problem of `invariant` that names `runId`. */
function expectCaught(records: SpanRecord[], invariant: string, runId: string): void {
  let caught: unknown;
  try {
    assertLineage(records);
  } catch (e) {
    caught = e;
  }
  expect(caught, `assertLineage let a broken "${invariant}" through`).toBeInstanceOf(LineageError);
  const err = caught as LineageError;
  expect(err.message).toContain(`[${invariant}]`);
  const hits = err.problems.filter((p) => p.invariant === invariant);
  expect(hits.length, `problems: ${err.message}`).toBeGreaterThan(0);
  expect(hits.some((p) => p.message.includes(runId)), `no [${invariant}] problem names ${runId}: ${err.message}`).toBe(true);
  expect(err.message).toContain(runId);
}

describe('assertLineage', () => {
  it('passes on real runs: a tree, a second tree, and a lone root', async () => {
    const first = await recordedTree('acme');
    expect(() => rec.assertLineage()).not.toThrow();
    expect(checkLineage(first.records)).toEqual([]);
    const { assistant } = threeLevelTree();
    await Promise.all([assistant.run('again', { scope: { tenantId: 'globex' } }), assistant.run('and again')]);
    expect(rec.spans().length).toBe(36);
    expect(() => rec.assertLineage()).not.toThrow();
  });

  it('unique-run-ids: two runs under one id', async () => {
    const { records, run, ids } = await recordedTree();
    run('fetcher').attributes['symfonic.run_id'] = ids.researcher;
    expectCaught(records, 'unique-run-ids', ids.researcher);
  });

  it('one-root-per-trace: a child that dropped its parent_run_id becomes a second root', async () => {
    const { records, run, ids } = await recordedTree();
    delete run('researcher').attributes['symfonic.parent_run_id'];
    run('researcher').attributes['symfonic.root_run_id'] = ids.researcher;
    expectCaught(records, 'one-root-per-trace', ids.researcher);
  });

  it('one-root-per-trace: a trace whose root span went missing', async () => {
    const { records, ids } = await recordedTree();
    const withoutRoot = records.filter((r) => r.attributes['symfonic.run_id'] !== ids.assistant);
    // The trace now has no root run; the orphaned child is named by parent-run-id.
    let caught: LineageError | undefined;
    try {
      assertLineage(withoutRoot);
    } catch (e) {
      caught = e as LineageError;
    }
    expect(caught?.problems.map((p) => p.invariant)).toContain('one-root-per-trace');
    expectCaught(withoutRoot, 'parent-run-id', ids.researcher);
  });

  it("single-root-run-id: a root whose root_run_id is not its own run_id", async () => {
    const { records, run, ids } = await recordedTree();
    run('assistant').attributes['symfonic.root_run_id'] = 'run-elsewhere';
    expectCaught(records, 'single-root-run-id', ids.assistant);
  });

  it("single-root-run-id: a child whose root_run_id differs from its parent's", async () => {
    const { records, run, ids } = await recordedTree();
    run('fetcher').attributes['symfonic.root_run_id'] = 'run-elsewhere';
    expectCaught(records, 'single-root-run-id', ids.fetcher);
  });

  it('parent-run-id: a child naming a parent that is not among the spans', async () => {
    const { records, run, ids } = await recordedTree();
    run('fetcher').attributes['symfonic.parent_run_id'] = 'run-ghost';
    expectCaught(records, 'parent-run-id', ids.fetcher);
  });

  it('parent-run-id: a run naming itself as its parent', async () => {
    const { records, run, ids } = await recordedTree();
    run('fetcher').attributes['symfonic.parent_run_id'] = ids.fetcher;
    expectCaught(records, 'parent-run-id', ids.fetcher);
  });

  it('depth: a child not one deeper than its parent', async () => {
    const { records, run, ids } = await recordedTree();
    run('fetcher').attributes['symfonic.agent_depth'] = 1;
    expectCaught(records, 'depth', ids.fetcher);
  });

  it("tenant: a child under another tenant than its parent's", async () => {
    const { records, run, ids } = await recordedTree();
    run('researcher').attributes['symfonic.tenant_id'] = 'globex';
    expectCaught(records, 'tenant', ids.researcher);
  });

  it('span-parentage: a child run whose span sits under a run other than its parent_run_id', async () => {
    const { records, run, ids } = await recordedTree();
    // Re-hang the fetcher's span under the root's delegation span: its parent_run_id still says researcher.
    const rootDelegation = records.find((r) => r.name === 'execute_tool run_agent' && r.attributes['symfonic.run_id'] === ids.assistant)!;
    run('fetcher').parentSpanId = rootDelegation.spanId;
    expectCaught(records, 'span-parentage', ids.fetcher);
  });

  it("span-lineage: a chat span carrying another run's run_id", async () => {
    const { records, ids } = await recordedTree();
    const chat = records.find((r) => r.name.startsWith('chat ') && r.attributes['symfonic.run_id'] === ids.fetcher)!;
    chat.attributes['symfonic.run_id'] = ids.researcher;
    expectCaught(records, 'span-lineage', ids.researcher);
  });

  it("span-lineage: a tool span carrying another tenant than its run's", async () => {
    const { records, ids } = await recordedTree();
    const tool = records.find((r) => r.name === 'execute_tool lookup')!;
    tool.attributes['symfonic.tenant_id'] = 'globex';
    expectCaught(records, 'span-lineage', ids.fetcher);
  });

  it('catches a hand-built broken pair of spans with no SDK involved', () => {
    const span = (spanId: string, parentSpanId: string | undefined, attributes: Record<string, unknown>): SpanRecord => ({
      traceId: 't1',
      spanId,
      parentSpanId,
      name: `invoke_agent ${String(attributes['gen_ai.agent.name'])}`,
      startMs: 0,
      endMs: 1,
      attributes: { 'gen_ai.operation.name': 'invoke_agent', ...attributes },
      status: 'ok',
    });
    const good = [
      span('s1', undefined, { 'gen_ai.agent.name': 'a', 'symfonic.run_id': 'r1', 'symfonic.root_run_id': 'r1', 'symfonic.agent_depth': 0, 'symfonic.tenant_id': 'x' }),
      span('s2', 's1', {
        'gen_ai.agent.name': 'b',
        'symfonic.run_id': 'r2',
        'symfonic.root_run_id': 'r1',
        'symfonic.parent_run_id': 'r1',
        'symfonic.agent_depth': 1,
        'symfonic.tenant_id': 'x',
      }),
    ];
    expect(() => assertLineage(good)).not.toThrow();
    const deep = [good[0]!, { ...good[1]!, attributes: { ...good[1]!.attributes, 'symfonic.agent_depth': 3 } }];
    expectCaught(deep, 'depth', 'r2');
  });
});

describe('delegationTree', () => {
  const sum = (a: { inputTokens: number; outputTokens: number }, b: { inputTokens: number; outputTokens: number }) => ({
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
  });

  it('returns the RunNode forest DESIGN.md defines, and recording.tree(rootRunId) picks one root', async () => {
    const { response, ids } = await recordedTree();
    const own = {
      assistant: sum(USAGE.assistant[0], USAGE.assistant[1]),
      researcher: sum(USAGE.researcher[0], USAGE.researcher[1]),
      fetcher: sum(USAGE.fetcher[0], USAGE.fetcher[1]),
    };
    const fetcher: RunNode = {
      agent: 'fetcher',
      runId: ids.fetcher,
      parentRunId: ids.researcher,
      rootRunId: response.runId,
      depth: 2,
      tenantId: 'acme',
      status: 'ok',
      usage: own.fetcher,
      totalUsage: own.fetcher,
      delegations: [],
      children: [],
    };
    const researcher: RunNode = {
      agent: 'researcher',
      runId: ids.researcher,
      parentRunId: ids.assistant,
      rootRunId: response.runId,
      depth: 1,
      tenantId: 'acme',
      status: 'ok',
      usage: own.researcher,
      totalUsage: sum(own.researcher, own.fetcher),
      delegations: [{ child: 'fetcher', outcome: 'delegated', childRunId: ids.fetcher }],
      children: [fetcher],
    };
    const root: RunNode = {
      agent: 'assistant',
      runId: response.runId,
      parentRunId: null,
      rootRunId: response.runId,
      depth: 0,
      tenantId: 'acme',
      status: 'ok',
      usage: own.assistant,
      totalUsage: sum(own.assistant, sum(own.researcher, own.fetcher)),
      delegations: [{ child: 'researcher', outcome: 'delegated', childRunId: ids.researcher }],
      children: [researcher],
    };
    // toStrictEqual: no extra keys (timing, cost) leak into the public shape.
    expect(delegationTree(rec.spans())).toStrictEqual([root]);
    expect(rec.tree()).toStrictEqual([root]);
    expect(rec.tree(response.runId)).toStrictEqual(root);
    expect(rec.tree(ids.researcher)).toBeUndefined();
    expect(rec.tree('run-that-never-was')).toBeUndefined();
  });

  it('holds a failed child as status error with its outcome, and two roots as two trees', async () => {
    const broken = new SymfonicAgent({ name: 'broken', modelProvider: scriptedModel(() => new Error('boom')) });
    const parent = new SymfonicAgent({
      name: 'top',
      modelProvider: scriptedModel([{ toolCalls: [{ name: 'run_agent', arguments: { name: 'broken', task: 'try' } }] }, 'done anyway']),
      subAgents: [new SubAgent({ name: 'broken', agent: broken, description: 'always fails' })],
    });
    const failed = await parent.run('go', { scope: { tenantId: 'acme' } });
    const { assistant } = threeLevelTree();
    const other = await assistant.run('two', { scope: { tenantId: 'globex' } });
    const forest = delegationTree(rec.spans());
    expect(forest.map((n) => n.runId).sort()).toEqual([failed.runId, other.runId].sort());
    const top = rec.tree(failed.runId)!;
    expect(top.status).toBe('ok');
    expect(top.children).toHaveLength(1);
    const child = top.children[0]!;
    expect(child).toMatchObject({ agent: 'broken', status: 'error', parentRunId: failed.runId, depth: 1, children: [] });
    expect(top.delegations).toEqual([{ child: 'broken', outcome: 'child_error', childRunId: child.runId }]);
    const g = rec.tree(other.runId)!;
    expect([g.tenantId, g.children[0]!.tenantId, g.children[0]!.children[0]!.tenantId]).toEqual(['globex', 'globex', 'globex']);
  });
});

/**
 * Property: over many random delegation trees, run concurrently and for several tenants, every
 * root's totalUsage is the sum of the own usage of every run in its tree, every tenant ledger is
 * the sum of its roots' totals, and nothing stays open afterwards.
 *
 * The trees are generated from a seed (mulberry32); one scripted responder plays every agent,
 * keyed on the task string, so each run's script is fixed by the tree and not by timing.
 */
import { describe, expect, it } from 'vitest';
import {
  FrameworkConfig,
  MetricsCollector,
  SubAgent,
  SymfonicAgent,
  priceTable,
  type AgentResponse,
} from '../../src/index.js';
import { scriptedModel, type ScriptedTurn } from '../../src/testing/index.js';
import { hop } from '../support/async.js';
import { recordEachTest } from '../support/per-test.js';
import { intIn, mulberry32 } from '../support/random.js';
import { noteTool, recordingChild, sumUsage, taskOf, tokens, turnOf } from './helpers.js';

const MAX_DEPTH = 3;
const TREES = 200;
const BATCH = 25;
const MAX_NODES = 24;
const CHILD_NAMES = ['alpha', 'beta', 'gamma'] as const;
const TENANTS = ['t-a', 't-b', 't-c', 't-d'];

interface TurnSpec {
  usage: { inputTokens: number; outputTokens: number };
  /** Delegations made in this turn, all at once; empty on the final turn. */
  children: { name: (typeof CHILD_NAMES)[number]; task: string }[];
  /** Scheduler hops before answering, so concurrent runs interleave differently. */
  hops: number;
}

interface NodeSpec {
  task: string;
  depth: number;
  turns: TurnSpec[];
  kids: NodeSpec[];
}

interface TreeSpec {
  root: NodeSpec;
  tenantId: string;
  nodes: NodeSpec[];
}

function genTree(rand: () => number, index: number): TreeSpec {
  const nodes: NodeSpec[] = [];
  const gen = (task: string, depth: number): NodeSpec => {
    const node: NodeSpec = { task, depth, turns: [], kids: [] };
    nodes.push(node);
    const turnCount = intIn(rand, 1, 3);
    for (let t = 0; t < turnCount; t++) {
      const final = t === turnCount - 1;
      const turn: TurnSpec = { usage: { inputTokens: intIn(rand, 0, 500), outputTokens: intIn(rand, 0, 200) }, children: [], hops: intIn(rand, 0, 2) };
      if (!final && depth < MAX_DEPTH) {
        const fanOut = Math.min(intIn(rand, 0, 3), MAX_NODES - nodes.length);
        for (let k = 0; k < fanOut; k++) {
          turn.children.push({ name: CHILD_NAMES[intIn(rand, 0, CHILD_NAMES.length - 1)]!, task: `${task}/${t}.${k}` });
        }
      }
      node.turns.push(turn);
      for (const c of turn.children) node.kids.push(gen(c.task, depth + 1));
    }
    return node;
  };
  const root = gen(`tree-${index}`, 0);
  return { root, tenantId: TENANTS[intIn(rand, 0, TENANTS.length - 1)]!, nodes };
}

function subtreeUsage(node: NodeSpec): { inputTokens: number; outputTokens: number } {
  return sumUsage([...node.turns.map((t) => t.usage), ...node.kids.map(subtreeUsage)]);
}

const PRICE = { inputPerMTok: 2, outputPerMTok: 8 };

describe('usage rolls up over random delegation trees', () => {
  const rec = recordEachTest();

  it(`${TREES} seeded trees, run ${BATCH} at a time across ${TENANTS.length} tenants, add up exactly`, async () => {
    const rand = mulberry32(0x5eed_2024);
    const trees = Array.from({ length: TREES }, (_, i) => genTree(rand, i));
    const byTask = new Map<string, NodeSpec>();
    for (const tree of trees) for (const n of tree.nodes) byTask.set(n.task, n);
    // The generator must actually produce what the property is about, or it proves little.
    const all = trees.flatMap((t) => t.nodes);
    expect(Math.max(...all.map((n) => n.depth))).toBe(MAX_DEPTH);
    expect(all.some((n) => n.turns.some((t) => t.children.length === 3))).toBe(true);
    expect(all.some((n) => n.turns.filter((t) => t.children.length > 0).length >= 2)).toBe(true);

    const model = scriptedModel(async (request): Promise<ScriptedTurn> => {
      const node = byTask.get(taskOf(request));
      if (!node) throw new Error(`no scripted node for task ${JSON.stringify(taskOf(request))}`);
      const t = turnOf(request);
      const turn = node.turns[t];
      if (!turn) throw new Error(`node ${node.task} was called for turn ${t} but has ${node.turns.length}`);
      await hop(turn.hops);
      if (t === node.turns.length - 1) return { text: `done ${node.task}`, usage: turn.usage };
      const toolCalls =
        turn.children.length > 0
          ? turn.children.map((c) => ({ name: 'run_agent', arguments: { name: c.name, task: c.task } }))
          : [{ name: 'note', arguments: { text: node.task } }];
      return { toolCalls, usage: turn.usage };
    }, { modelName: 'prop-model' });

    const collector = new MetricsCollector({ prices: priceTable({ 'prop-model': PRICE }) });
    const config = new FrameworkConfig({ agent: { maxAgentDepth: MAX_DEPTH, maxTurns: 10 } });
    // Every child run's response, by task, seen through a wrapper the roster calls.
    const responses = new Map<string, AgentResponse>();
    const spy = (agent: SymfonicAgent) => recordingChild(agent, (task, r) => responses.set(task, r));
    let level: SymfonicAgent | undefined;
    for (let depth = MAX_DEPTH; depth >= 0; depth--) {
      const below = level;
      level = new SymfonicAgent({
        name: `level${depth}`,
        modelProvider: model,
        tools: [noteTool],
        config,
        metricsCollector: collector,
        ...(below ? { subAgents: CHILD_NAMES.map((name) => new SubAgent({ name, agent: spy(below), description: `child ${name}` })) } : {}),
      });
    }
    const rootAgent = level!;

    const roots: { tree: TreeSpec; response: AgentResponse }[] = [];
    for (let i = 0; i < TREES; i += BATCH) {
      const batch = trees.slice(i, i + BATCH);
      const done = await Promise.all(batch.map((tree) => rootAgent.run(tree.root.task, { scope: { tenantId: tree.tenantId } })));
      done.forEach((response, k) => {
        roots.push({ tree: batch[k]!, response });
        responses.set(batch[k]!.root.task, response);
      });
    }

    expect(collector.openRuns).toBe(0);
    expect(responses.size).toBe(all.length);
    expect(model.calls.length).toBe(all.reduce((n, node) => n + node.turns.length, 0));

    for (const { tree, response } of roots) {
      // The figure the property is about: the root's total is the sum of each run's own usage.
      const owns = tree.nodes.map((n) => responses.get(n.task)!.usage);
      expect(tokens(response.totalUsage), tree.root.task).toEqual(sumUsage(owns));
      expect(tokens(response.totalUsage)).toEqual(subtreeUsage(tree.root));
      // Each run's own figures are its own calls, and each total is its own subtree.
      for (const n of tree.nodes) {
        const r = responses.get(n.task)!;
        expect(tokens(r.usage), n.task).toEqual(sumUsage(n.turns.map((t) => t.usage)));
        expect(tokens(r.totalUsage), n.task).toEqual(subtreeUsage(n));
        expect(r.rootRunId).toBe(response.runId);
        expect(r.agentDepth).toBe(n.depth);
      }
      const expectedCost = (subtreeUsage(tree.root).inputTokens * PRICE.inputPerMTok + subtreeUsage(tree.root).outputTokens * PRICE.outputPerMTok) / 1e6;
      expect(response.totalCostUsd).toBeCloseTo(expectedCost, 10);
    }

    for (const tenantId of TENANTS) {
      const mine = roots.filter((r) => r.tree.tenantId === tenantId);
      expect(mine.length).toBeGreaterThan(0);
      const ledger = collector.tenant(tenantId);
      expect(tokens(ledger.usage), tenantId).toEqual(sumUsage(mine.map((r) => r.response.totalUsage)));
      expect(ledger.costUsd).toBeCloseTo(mine.reduce((c, r) => c + r.response.totalCostUsd!, 0), 9);
    }

    // The spans tell the same story: own usage on each invoke_agent span sums to the root's total.
    const ownBySpanRoot = new Map<string, { inputTokens: number; outputTokens: number }[]>();
    const rootSpanTotals = new Map<string, { inputTokens: number; outputTokens: number }>();
    for (const s of rec.spans()) {
      if (s.attributes['gen_ai.operation.name'] !== 'invoke_agent') continue;
      const rootRunId = String(s.attributes['symfonic.root_run_id']);
      const own = { inputTokens: Number(s.attributes['gen_ai.usage.input_tokens']), outputTokens: Number(s.attributes['gen_ai.usage.output_tokens']) };
      ownBySpanRoot.set(rootRunId, [...(ownBySpanRoot.get(rootRunId) ?? []), own]);
      if (s.attributes['symfonic.run_id'] === rootRunId) {
        rootSpanTotals.set(rootRunId, {
          inputTokens: Number(s.attributes['symfonic.usage.total_input_tokens']),
          outputTokens: Number(s.attributes['symfonic.usage.total_output_tokens']),
        });
      }
    }
    for (const { tree, response } of roots) {
      expect(ownBySpanRoot.get(response.runId)?.length).toBe(tree.nodes.length);
      expect(sumUsage(ownBySpanRoot.get(response.runId)!)).toEqual(tokens(response.totalUsage));
      expect(rootSpanTotals.get(response.runId)).toEqual(tokens(response.totalUsage));
    }
    rec.assertLineage();
  });
});

/**
 * One set of agent instances serves many tenants at once. A thousand root runs across ten tenants,
 * interleaved by random delays and delegating to random depths, must not bleed into each other:
 * not in lineage, not in span attributes, not in `delegatedTo`, not in usage, not in a tenant's
 * ledger. Every figure checked here is computed independently from the seeded plan.
 */
import { describe, expect, it } from 'vitest';
import { SubAgent, type ModelRequest, type Usage } from '../../src/index.js';
import { scriptedModel, type RunNode, type ScriptedTurn } from '../../src/testing/index.js';
import { deferred, until, type Deferred } from '../support/async.js';
import { intIn, mulberry32 } from '../support/random.js';
import { rigEachTest, spansNamed } from './rig.js';

const r = rigEachTest();

type AgentName = 'root' | 'mid' | 'leaf';

interface Plan {
  id: string;
  agent: AgentName;
  /** One entry per model call this run makes: two when it delegates, else one. */
  calls: { inputTokens: number; outputTokens: number; delayMs: number }[];
  children: Plan[];
}

const ROOTS = 1000;
const TENANTS = Array.from({ length: 10 }, (_, i) => `tenant-${i}`);

function makePlans(seed: number): { roots: { plan: Plan; tenant: string }[]; byId: Map<string, Plan> } {
  const rand = mulberry32(seed);
  const int = (lo: number, hi: number) => intIn(rand, lo, hi);
  const byId = new Map<string, Plan>();
  let next = 0;
  const node = (agent: AgentName, depthLeft: number): Plan => {
    const children: Plan[] = [];
    if (depthLeft > 0 && agent !== 'leaf') {
      const n = int(0, agent === 'root' ? 3 : 2);
      for (let i = 0; i < n; i++) {
        // A mid is only planned where it has a level left to delegate into.
        const childAgent: AgentName = agent === 'root' && depthLeft > 1 && rand() < 0.5 ? 'mid' : 'leaf';
        children.push(node(childAgent, depthLeft - 1));
      }
    }
    const n = next++;
    const calls = Array.from({ length: children.length > 0 ? 2 : 1 }, () => ({ inputTokens: int(1, 49), outputTokens: int(1, 20), delayMs: int(0, 3) }));
    // The run's own input tokens name its plan (see planOf), so a span identifies the run it
    // belongs to without recording any content.
    calls[0]!.inputTokens += (n + 1) * 100;
    const plan: Plan = { id: `plan-${n}`, agent, calls, children };
    byId.set(plan.id, plan);
    return plan;
  };
  const roots = Array.from({ length: ROOTS }, (_, i) => ({ plan: node('root', int(0, 2)), tenant: TENANTS[i % TENANTS.length]! }));
  return { roots, byId };
}

function subtreeUsage(p: Plan): { inputTokens: number; outputTokens: number } {
  let inputTokens = 0;
  let outputTokens = 0;
  for (const c of p.calls) {
    inputTokens += c.inputTokens;
    outputTokens += c.outputTokens;
  }
  for (const child of p.children) {
    const s = subtreeUsage(child);
    inputTokens += s.inputTokens;
    outputTokens += s.outputTokens;
  }
  return { inputTokens, outputTokens };
}

/**
 * Every agent shares one responder: the task is a plan id, so what a run does depends only on
 * its own task, and any mix-up between runs shows up as a wrong figure.
 */
function responder(byId: Map<string, Plan>) {
  return (req: ModelRequest): ScriptedTurn => {
    const plan = byId.get(req.messages[0]!.content);
    if (!plan) throw new Error(`no plan for task ${req.messages[0]!.content.slice(0, 40)}`);
    const callIndex = req.messages.filter((m) => m.role === 'assistant').length;
    const call = plan.calls[callIndex];
    if (!call) throw new Error(`plan ${plan.id} made more model calls than planned`);
    const usage: Partial<Usage> = { inputTokens: call.inputTokens, outputTokens: call.outputTokens };
    if (callIndex === 0 && plan.children.length > 0) {
      return { toolCalls: plan.children.map((c) => ({ name: 'run_agent', arguments: { name: c.agent, task: c.id } })), usage, delayMs: call.delayMs };
    }
    const read = req.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    return { text: [`${plan.id} done`, ...read].join(' | '), usage, delayMs: call.delayMs };
  };
}

/** The transcript a plan's run answers with: its own id, then each child's answer in call order. */
function expectedAnswer(p: Plan): string {
  return [`${p.id} done`, ...p.children.map(expectedAnswer)].join(' | ');
}

/** The plan a run span belongs to, read back from its own input tokens. */
function planOf(node: RunNode, byId: Map<string, Plan>): Plan | undefined {
  return byId.get(`plan-${Math.floor(node.usage.inputTokens / 100) - 1}`);
}

/**
 * The span tree under one root is exactly its plan: each node's run did that plan's work, under
 * that plan's parent, for the root's tenant. Siblings are compared as sets; their order is
 * checked on its own below.
 */
function checkNode(node: RunNode, plan: Plan, tenant: string, rootRunId: string, byId: Map<string, Plan>, problems: string[]): void {
  const where = `${plan.id} (${plan.agent})`;
  const want = subtreeUsage(plan);
  if (node.agent !== plan.agent) problems.push(`${where}: span says agent ${node.agent}`);
  if (node.tenantId !== tenant) problems.push(`${where}: tenant ${node.tenantId}, expected ${tenant}`);
  if (node.rootRunId !== rootRunId) problems.push(`${where}: root_run_id ${node.rootRunId}, expected ${rootRunId}`);
  if (node.status !== 'ok') problems.push(`${where}: status ${node.status}`);
  if (node.totalUsage.inputTokens !== want.inputTokens || node.totalUsage.outputTokens !== want.outputTokens) {
    problems.push(`${where}: total usage ${JSON.stringify(node.totalUsage)}, expected ${JSON.stringify(want)}`);
  }
  const delegated = node.delegations.map((d) => `${d.child}:${d.outcome}`).sort();
  const planned = plan.children.map((c) => `${c.agent}:delegated`).sort();
  if (delegated.join() !== planned.join()) problems.push(`${where}: delegations [${delegated}], planned [${planned}]`);
  const seen = node.children.map((c) => planOf(c, byId));
  const got = seen.map((p) => p?.id ?? '?').sort();
  const expected = plan.children.map((c) => c.id).sort();
  if (got.join() !== expected.join()) {
    problems.push(`${where}: child runs [${got}], planned [${expected}]`);
    return;
  }
  node.children.forEach((child, i) => checkNode(child, seen[i]!, tenant, rootRunId, byId, problems));
}

describe('1,000 concurrent root runs across 10 tenants', () => {
  it('keep lineage, span attributes, delegatedTo, usage and tenant ledgers apart', async () => {
    const { roots, byId } = makePlans(20240611);
    const model = scriptedModel(responder(byId));
    const leaf = r.agent({ name: 'leaf', modelProvider: model });
    const mid = r.agent({ name: 'mid', modelProvider: model, subAgents: [new SubAgent({ name: 'leaf', agent: leaf, description: 'does one thing' })] });
    const root = r.agent({
      name: 'root',
      modelProvider: model,
      subAgents: [
        new SubAgent({ name: 'mid', agent: mid, description: 'delegates further' }),
        new SubAgent({ name: 'leaf', agent: leaf, description: 'does one thing' }),
      ],
    });
    const depths = new Set(roots.map(({ plan }) => (plan.children.length === 0 ? 0 : plan.children.some((c) => c.children.length > 0) ? 2 : 1)));
    expect([...depths].sort()).toEqual([0, 1, 2]);

    const responses = await Promise.all(roots.map(({ plan, tenant }) => root.run(plan.id, { scope: { tenantId: tenant } })));

    // Each root answered its own plan, and delegated to exactly the children its plan chose.
    const problems: string[] = [];
    responses.forEach((res, i) => {
      const { plan } = roots[i]!;
      if (res.finalResponse !== expectedAnswer(plan)) problems.push(`${plan.id}: answered ${res.finalResponse.slice(0, 80)}`);
      const want = plan.children.map((c) => c.agent);
      if (res.delegatedTo.join() !== want.join()) problems.push(`${plan.id}: delegatedTo [${res.delegatedTo}], planned [${want}]`);
      const usage = subtreeUsage(plan);
      if (res.totalUsage.inputTokens !== usage.inputTokens || res.totalUsage.outputTokens !== usage.outputTokens) {
        problems.push(`${plan.id}: totalUsage ${JSON.stringify(res.totalUsage)}, expected ${JSON.stringify(usage)}`);
      }
    });
    expect(problems.slice(0, 10), problems.slice(0, 10).join('\n')).toEqual([]);

    r.rec.assertLineage();

    // Every span carries the tenant and root of the tree it sits in.
    const tenantOfRoot = new Map(responses.map((res, i) => [res.runId, roots[i]!.tenant]));
    const spans = r.rec.spans();
    const traceOfRoot = new Map<string, string>();
    for (const s of spans) {
      if (s.attributes['gen_ai.operation.name'] === 'invoke_agent' && s.attributes['symfonic.parent_run_id'] === undefined) {
        traceOfRoot.set(s.attributes['symfonic.run_id'] as string, s.spanContext().traceId);
      }
    }
    expect(traceOfRoot.size).toBe(ROOTS);
    for (const s of spans) {
      const rootRunId = s.attributes['symfonic.root_run_id'] as string;
      if (!tenantOfRoot.has(rootRunId)) problems.push(`span ${s.name} names unknown root ${rootRunId}`);
      else if (s.attributes['symfonic.tenant_id'] !== tenantOfRoot.get(rootRunId)) problems.push(`span ${s.name} of root ${rootRunId} has tenant ${String(s.attributes['symfonic.tenant_id'])}`);
      if (s.spanContext().traceId !== traceOfRoot.get(rootRunId)) problems.push(`span ${s.name} of root ${rootRunId} sits in another trace`);
    }
    expect(problems.slice(0, 10), problems.slice(0, 10).join('\n')).toEqual([]);

    // The span trees match the plans at every level: no child ran under another root's parent.
    const forest = new Map(r.rec.tree().map((n) => [n.runId, n]));
    expect(forest.size).toBe(ROOTS);
    responses.forEach((res, i) => {
      const node = forest.get(res.runId);
      if (!node) problems.push(`no span tree for root ${roots[i]!.plan.id}`);
      else checkNode(node, roots[i]!.plan, roots[i]!.tenant, res.runId, byId, problems);
    });
    expect(problems.slice(0, 10), problems.slice(0, 10).join('\n')).toEqual([]);

    // Tenant ledgers are exactly the sums of their roots' totals.
    for (const tenant of TENANTS) {
      const mine = responses.filter((_, i) => roots[i]!.tenant === tenant);
      const input = mine.reduce((n, res) => n + res.totalUsage.inputTokens, 0);
      const output = mine.reduce((n, res) => n + res.totalUsage.outputTokens, 0);
      const ledger = r.collector.tenant(tenant);
      expect({ tenant, input: ledger.usage.inputTokens, output: ledger.usage.outputTokens }).toEqual({ tenant, input, output });
      expect(r.store.usage(tenant, undefined, Date.now()).spent.tokens).toBe(input + output);
    }

    const runs = [...byId.values()].length;
    expect(r.collector.started).toBe(runs);
    r.settled();
  });
});

describe('the span tree of one run', () => {
  /**
   * The OTel SDK stamps span starts from Date.now(), so siblings started in one turn share a
   * millisecond; the tree must still list them in the order the model asked for them, not in the
   * order they happened to finish.
   */
  it('lists delegations and child runs in call order when they finish in reverse', async () => {
    // Eight: the default maxConcurrentDelegations, so all of them are in flight at once.
    const n = 8;
    const gates: Deferred[] = [];
    const leaf = r.agent({
      name: 'leaf',
      modelProvider: scriptedModel(async () => {
        const gate = deferred();
        gates.push(gate);
        await gate.promise;
        return 'ok';
      }),
    });
    const calls = Array.from({ length: n }, (_, i) => ({ name: 'run_agent', arguments: { name: 'leaf', task: `t${i}` }, id: `call-${i}` }));
    const root = r.agent({
      name: 'root',
      modelProvider: scriptedModel([{ toolCalls: calls }, 'done']),
      subAgents: [new SubAgent({ name: 'leaf', agent: leaf, description: 'does one thing' })],
    });
    const pending = root.run('go', { scope: { tenantId: 'acme' } });
    await until(() => gates.length === n, 'every child to start');
    for (const gate of [...gates].reverse()) {
      gate.resolve();
      await new Promise<void>((res) => setImmediate(res));
    }
    const res = await pending;
    const byCallId = new Map(spansNamed(r.rec, 'execute_tool run_agent').map((s) => [s.attributes['gen_ai.tool.call.id'], s.attributes['symfonic.delegation.child_run_id']]));
    const inCallOrder = calls.map((c) => byCallId.get(c.id));
    const node = r.rec.tree(res.runId)!;
    expect(node.delegations.map((d) => d.childRunId)).toEqual(inCallOrder);
    expect(node.children.map((c) => c.runId)).toEqual(inCallOrder);
    r.settled();
  });
});

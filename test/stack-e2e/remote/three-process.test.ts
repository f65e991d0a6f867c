/**
 * Issue 14, test 1: router → remote researcher → remote fact checker, three processes on
 * loopback, each exporting to the stack's collector and charging one Redis budget store.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBudgetStore } from '../../../src/budget/redis/redis-budget-store.js';
import { assertLineage, delegationTree, type RunNode } from '../../../src/testing/index.js';
import { attrs, jaegerSearch, otlpSpans, poll, stackUrls, uniqueName, type OtlpAnswer, type OtlpSpan } from '../support/stack.js';

const WORKER = fileURLToPath(new URL('./remote-worker.mjs', import.meta.url));
type Usage = { inputTokens: number; outputTokens: number };

interface Proc {
  child: ChildProcess;
  next<T>(type: string): Promise<T>;
}

function start(config: Record<string, unknown>): Proc {
  const child = fork(WORKER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const inbox: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  child.on('message', (m) => {
    inbox.push(m as Record<string, unknown>);
    for (const w of waiters.splice(0)) w();
  });
  child.once('exit', () => {
    for (const w of waiters.splice(0)) w();
  });
  child.send(config);
  const next = async <T,>(type: string): Promise<T> => {
    for (;;) {
      const error = inbox.find((m) => m['type'] === 'error');
      if (error) throw new Error(`${String(config['role'])} worker failed: ${String(error['error'])}`);
      const at = inbox.findIndex((m) => m['type'] === type);
      if (at >= 0) return inbox.splice(at, 1)[0] as T;
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${String(config['role'])} worker exited before "${type}"`);
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  return { child, next };
}

const walk = (n: RunNode): RunNode[] => [n, ...n.children.flatMap(walk)];
const add = (a: Usage, b: Usage): Usage => ({ inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens });

describe('a delegation tree across three processes over A2A', () => {
  const tenant = uniqueName('tenant');
  const keyPrefix = `${uniqueName('remote-e2e')}:`;
  const services = { router: uniqueName('e2e-router'), researcher: uniqueName('e2e-researcher'), fact_checker: uniqueName('e2e-fact-checker') };
  const procs: Proc[] = [];
  let reply: { runId: string; finalResponse: string; totalUsage: Usage & { source: string }; usage: Usage };
  const own: Record<string, Usage> = {};
  let answer: OtlpAnswer;
  let spans: OtlpSpan[];
  let spent: number;

  beforeAll(async () => {
    const { otlp, redis } = stackUrls();
    const common = { otlp, redis, keyPrefix, tenant, token: 'fleet-secret' };
    const startedAt = Date.now();
    const checker = start({ ...common, role: 'fact_checker', serviceName: services.fact_checker });
    procs.push(checker);
    const checkerUrl = (await checker.next<{ url: string }>('ready')).url;
    const researcher = start({ ...common, role: 'researcher', serviceName: services.researcher, child: { name: 'fact_checker', url: checkerUrl } });
    procs.push(researcher);
    const researcherUrl = (await researcher.next<{ url: string }>('ready')).url;
    const router = start({ ...common, role: 'router', serviceName: services.router, child: { name: 'researcher', url: researcherUrl } });
    procs.push(router);
    reply = (await router.next<{ reply: typeof reply }>('answer')).reply;
    for (const [role, p] of [['router', router], ['researcher', researcher], ['fact_checker', checker]] as const) {
      p.child.send({ type: 'stop' });
      const r = await p.next<{ result: { own: Usage; openRuns: number } }>('result');
      expect(r.result.openRuns, role).toBe(0);
      own[role] = r.result.own;
    }
    const found = await poll(
      () => jaegerSearch(services.router, startedAt - 1000, Date.now() + 1000),
      (a) => a !== null && otlpSpans(a).length >= 10,
      { timeoutMs: 60_000 },
    );
    expect(found, `Jaeger never returned the router's trace (service ${services.router})`).not.toBeNull();
    answer = found!;
    spans = otlpSpans(answer);
    const store = new RedisBudgetStore({ redis, keyPrefix });
    spent = (await store.usage(tenant, undefined, Date.now())).spent.tokens;
    await store.close();
  }, 150_000);

  afterAll(() => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  });

  it('Jaeger holds one trace with every span of all three processes, none missing its parent', () => {
    const traces = new Set(spans.map((s) => s.traceId));
    expect(traces.size).toBe(1);
    const ids = new Set(spans.map((s) => s.spanId));
    expect(spans.filter((s) => !s.parentSpanId).map((s) => s.name)).toEqual(['invoke_agent router']);
    expect(spans.filter((s) => s.parentSpanId && !ids.has(s.parentSpanId))).toEqual([]);
    const runs = (agent: string) => spans.filter((s) => s.name === `invoke_agent ${agent}` && attrs(s)['symfonic.run_id'] !== undefined).length;
    const count = (name: string) => spans.filter((s) => s.name === name).length;
    expect([runs('router'), runs('researcher'), runs('fact_checker')]).toEqual([1, 1, 1]);
    // Each hop also has the caller's CLIENT span (kind 3), between its execute_tool span and the served run.
    const hops = spans.filter((s) => s.kind === 3 && attrs(s)['gen_ai.operation.name'] === 'invoke_agent');
    expect(hops.map((s) => s.name).sort()).toEqual(['invoke_agent fact_checker', 'invoke_agent researcher']);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    for (const hop of hops) {
      expect(byId.get(hop.parentSpanId!)?.name).toBe('execute_tool run_agent');
      expect(spans.filter((s) => s.parentSpanId === hop.spanId).map((s) => s.name)).toEqual([hop.name]);
    }
    expect(count('execute_tool run_agent')).toBe(2);
    expect(spans.filter((s) => attrs(s)['gen_ai.operation.name'] === 'chat')).toHaveLength(5);
    // Each process's spans came from its own service.
    const servicesSeen = answer.result.resourceSpans.map((r) => attrs(r.resource ?? {})['service.name']).sort();
    expect(new Set(servicesSeen)).toEqual(new Set(Object.values(services)));
  });

  it("assertLineage passes over Jaeger's spans, and the tree is router → researcher → fact_checker", () => {
    expect(() => assertLineage(answer)).not.toThrow();
    const roots = delegationTree(answer);
    expect(roots).toHaveLength(1);
    const nodes = walk(roots[0]!);
    expect(nodes.map((n) => [n.agent, n.depth, n.tenantId])).toEqual([
      ['router', 0, tenant],
      ['researcher', 1, tenant],
      ['fact_checker', 2, tenant],
    ]);
    expect(nodes[1]).toMatchObject({ parentRunId: reply.runId, rootRunId: reply.runId });
    expect(nodes[2]).toMatchObject({ parentRunId: nodes[1]!.runId, rootRunId: reply.runId });
    expect(roots[0]!.delegations).toEqual([{ child: 'researcher', outcome: 'delegated', childRunId: nodes[1]!.runId }]);
  });

  it("the router's totalUsage is the sum of the three processes' own usage", () => {
    const sum = add(add(own['router']!, own['researcher']!), own['fact_checker']!);
    expect({ inputTokens: reply.totalUsage.inputTokens, outputTokens: reply.totalUsage.outputTokens }).toEqual(sum);
    expect(reply.totalUsage.source).toBe('reported');
    expect(reply.usage).toEqual(expect.objectContaining(own['router']));
  });

  it("the shared Redis store charged the tenant's spend once", () => {
    const sum = add(add(own['router']!, own['researcher']!), own['fact_checker']!);
    expect(spent).toBe(sum.inputTokens + sum.outputTokens);
  });
});

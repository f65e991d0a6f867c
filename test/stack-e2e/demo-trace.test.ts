/**
 * Issue 12, test 1: `symfonic demo --otlp <collector>` and the trace it prints, read back from the
 * real Jaeger through the real collector. Also `symfonic tree --jaeger` against that Jaeger.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { assertLineage, delegationTree, type RunNode } from '../../src/testing/index.js';
import { runCli } from '../cli/helpers.js';
import { attrs, jaegerUiTrace, otlpSpans, settledTrace, stackUrls, uniqueName, type OtlpAnswer, type OtlpSpan, type UiTrace } from './support/stack.js';

/** The RunNode fields of the contract, recursively: what both trees must agree on. */
function plain(n: RunNode): unknown {
  return {
    agent: n.agent,
    runId: n.runId,
    parentRunId: n.parentRunId,
    rootRunId: n.rootRunId,
    depth: n.depth,
    tenantId: n.tenantId,
    status: n.status,
    usage: n.usage,
    totalUsage: n.totalUsage,
    delegations: n.delegations,
    children: n.children.map(plain),
  };
}

const walk = (n: RunNode): RunNode[] => [n, ...n.children.flatMap(walk)];

describe('symfonic demo --otlp <collector>: the trace in Jaeger', () => {
  const service = uniqueName('symfonic-e2e-demo');
  let traceId: string;
  let demoTree: RunNode;
  let answer: OtlpAnswer;
  let spans: OtlpSpan[];

  beforeAll(async () => {
    const { otlp, jaeger } = stackUrls();
    const r = await runCli(['demo', '--json', '--otlp', otlp, '--jaeger-url', jaeger], { env: { OTEL_SERVICE_NAME: service } });
    expect(r.code, r.stderr).toBe(0);
    demoTree = JSON.parse(r.stdout) as RunNode;
    // Under --json the trace goes to stderr: as a link where a Jaeger UI answers, else (a Jaeger
    // built without its UI, as this stack's is) as the tree command that reads it back.
    const at = jaeger.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const link = new RegExp(`${at}/trace/([0-9a-f]{32})|tree --jaeger ${at} ([0-9a-f]{32})`).exec(r.stderr);
    expect(link, `no Jaeger link or tree command on stderr: ${r.stderr}`).not.toBeNull();
    traceId = (link![1] ?? link![2])!;
    const runs = walk(demoTree).length;
    const fetched = await settledTrace(traceId, { minSpans: runs });
    expect(fetched, `Jaeger never returned trace ${traceId}`).not.toBeNull();
    answer = fetched!;
    spans = otlpSpans(answer);
  });

  it('Jaeger holds every span of the tree: no missing parent, every run, every delegation, every model call', () => {
    const ids = new Set(spans.map((s) => s.spanId));
    expect(ids.size).toBe(spans.length);
    expect(spans.filter((s) => !s.parentSpanId).map((s) => s.name)).toEqual([`invoke_agent ${demoTree.agent}`]);
    expect(spans.filter((s) => s.parentSpanId && !ids.has(s.parentSpanId))).toEqual([]);
    const nodes = walk(demoTree);
    const runSpans = spans.filter((s) => attrs(s)['gen_ai.operation.name'] === 'invoke_agent');
    expect(runSpans.map((s) => attrs(s)['symfonic.run_id']).sort()).toEqual(nodes.map((n) => n.runId).sort());
    const delegationSpans = spans.filter((s) => s.name === 'execute_tool run_agent');
    expect(delegationSpans).toHaveLength(nodes.reduce((k, n) => k + n.delegations.length, 0));
    // A run's own usage is the sum of its model calls: a chat span missing in Jaeger would show.
    for (const n of nodes) {
      const chats = spans.filter((s) => attrs(s)['gen_ai.operation.name'] === 'chat' && attrs(s)['symfonic.run_id'] === n.runId);
      expect(chats.length, `model calls of ${n.agent}`).toBeGreaterThan(0);
      const sum = (k: string) => chats.reduce((t, s) => t + Number(attrs(s)[k]), 0);
      expect({ inputTokens: sum('gen_ai.usage.input_tokens'), outputTokens: sum('gen_ai.usage.output_tokens') }, n.agent).toEqual(n.usage);
    }
  });

  it("delegationTree rebuilds the demo's own tree from Jaeger's OTLP JSON, and assertLineage passes", () => {
    const roots = delegationTree(answer);
    expect(roots).toHaveLength(1);
    expect(plain(roots[0]!)).toEqual(plain(demoTree));
    expect(walk(roots[0]!).map((n) => n.agent)).toEqual(['router', 'researcher', 'fact_checker', 'analyst', 'writer']);
    expect(() => assertLineage(answer)).not.toThrow();
  });

  it("Jaeger's parent references (/api/traces) match run lineage span for span", async () => {
    const ui: UiTrace = await jaegerUiTrace(traceId);
    expect(ui.spans).toHaveLength(spans.length);
    const v3Parent = new Map(spans.map((s) => [s.spanId, s.parentSpanId ?? null]));
    const byId = new Map(ui.spans.map((s) => [s.spanID, s]));
    const tag = (s: UiTrace['spans'][number], k: string) => s.tags.find((t) => t.key === k)?.value;
    const parentOf = (s: UiTrace['spans'][number]) => {
      const ref = s.references.find((r) => r.refType === 'CHILD_OF');
      return ref ? byId.get(ref.spanID) : undefined;
    };
    const enclosingRun = (s: UiTrace['spans'][number]) => {
      let p = parentOf(s);
      while (p && tag(p, 'gen_ai.operation.name') !== 'invoke_agent') p = parentOf(p);
      return p;
    };
    const rootRunId = demoTree.runId;
    for (const s of ui.spans) {
      const where = `${s.operationName} ${s.spanID}`;
      expect(parentOf(s)?.spanID ?? null, where).toBe(v3Parent.get(s.spanID));
      expect(tag(s, 'symfonic.root_run_id'), where).toBe(rootRunId);
      expect(tag(s, 'symfonic.tenant_id'), where).toBe('demo');
      const runId = tag(s, 'symfonic.run_id');
      if (tag(s, 'gen_ai.operation.name') !== 'invoke_agent') {
        expect(tag(enclosingRun(s)!, 'symfonic.run_id'), where).toBe(runId);
        continue;
      }
      const parentRunId = tag(s, 'symfonic.parent_run_id');
      if (parentRunId === undefined) {
        expect(runId, where).toBe(rootRunId);
        expect(parentOf(s), where).toBeUndefined();
        continue;
      }
      const hop = parentOf(s)!;
      expect(hop.operationName, where).toBe('execute_tool run_agent');
      expect(tag(hop, 'symfonic.run_id'), where).toBe(parentRunId);
      expect(tag(hop, 'symfonic.delegation.child_run_id'), where).toBe(runId);
      expect(tag(enclosingRun(s)!, 'symfonic.run_id'), where).toBe(parentRunId);
      expect(tag(s, 'symfonic.agent_depth'), where).toBe(Number(tag(enclosingRun(s)!, 'symfonic.agent_depth')) + 1);
    }
    expect(Object.values(ui.processes).map((p) => p.serviceName)).toEqual([service]);
  });

  it('stores the service name, the GenAI attributes and the symfonic.* lineage on every span', () => {
    const resource = attrs(answer.result.resourceSpans[0]!.resource ?? {});
    expect(answer.result.resourceSpans.every((r) => attrs(r.resource ?? {})['service.name'] === service)).toBe(true);
    expect(resource['service.name']).toBe(service);
    for (const s of spans) {
      const a = attrs(s);
      for (const k of ['gen_ai.operation.name', 'symfonic.run_id', 'symfonic.root_run_id', 'symfonic.agent_depth', 'symfonic.tenant_id']) expect(a[k], `${s.name}: ${k}`).toBeDefined();
      const op = a['gen_ai.operation.name'];
      if (op === 'invoke_agent') {
        expect(s.name).toBe(`invoke_agent ${String(a['gen_ai.agent.name'])}`);
        for (const k of ['gen_ai.provider.name', 'gen_ai.request.model', 'gen_ai.usage.input_tokens', 'gen_ai.usage.output_tokens', 'symfonic.usage.total_input_tokens', 'symfonic.usage.total_output_tokens', 'symfonic.cost.usd', 'symfonic.cost.total_usd']) {
          expect(a[k], `${s.name}: ${k}`).toBeDefined();
        }
      } else if (op === 'chat') {
        expect(s.kind).toBe(3); // SPAN_KIND_CLIENT
        expect(s.name).toBe(`chat ${String(a['gen_ai.request.model'])}`);
        for (const k of ['gen_ai.provider.name', 'gen_ai.response.model', 'gen_ai.usage.input_tokens', 'gen_ai.usage.output_tokens', 'gen_ai.response.finish_reasons']) expect(a[k], `${s.name}: ${k}`).toBeDefined();
      } else {
        expect(op).toBe('execute_tool');
        expect(a['gen_ai.tool.name']).toBe('run_agent');
        expect(a['gen_ai.tool.type']).toBe('function');
        expect(typeof a['gen_ai.tool.call.id']).toBe('string');
        expect(['delegated', 'refused_depth']).toContain(a['symfonic.delegation.outcome']);
      }
    }
    const refused = spans.find((s) => attrs(s)['symfonic.delegation.outcome'] === 'refused_depth');
    expect(attrs(refused!)['symfonic.delegation.child']).toBe('archivist');
    expect(refused!.status?.code).toBe(2);
  });

  it('symfonic tree --jaeger draws the same tree from the real Jaeger', async () => {
    const { jaeger } = stackUrls();
    const [json, text] = await Promise.all([runCli(['tree', '--json', '--jaeger', jaeger, traceId]), runCli(['tree', '--jaeger', jaeger, traceId])]);
    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    expect(plain(JSON.parse(json.stdout) as RunNode)).toEqual(plain(demoTree));
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`trace ${traceId}`);
    expect(text.stdout).toMatch(/archivist[\s\S]*refused_depth/);
  });
});

import { SpanKind } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { InMemoryBudgetStore, SPAN_ATTRIBUTES as ATTR, TenantBudgets } from '../../src/index.js';
import { recordEachTest } from '../support/per-test.js';
import { clientSpan, collector, delegationSpan, router, runSpan, serveLeaf, PRICE, type Served } from './helpers.js';

const rec = recordEachTest();
const open: Served[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.server.close()));
});

describe('a remote child over A2A on loopback', () => {
  it('is a child in every sense: parent run, root, depth, tenant, and span parentage in one trace', async () => {
    const researcher = await serveLeaf('researcher');
    open.push(researcher);
    const routerAgent = router({ name: 'researcher', url: researcher.server.url, description: 'Finds facts.' });
    const reply = await routerAgent.run('What is true?', { scope: { tenantId: 'acme' } });

    expect(reply.finalResponse).toBe('done [researcher found it]');
    rec.assertLineage();
    const tree = rec.tree(reply.runId)!;
    expect(tree.children).toHaveLength(1);
    const child = tree.children[0]!;
    expect(child).toMatchObject({ agent: 'researcher', parentRunId: reply.runId, rootRunId: reply.runId, depth: 1, tenantId: 'acme', status: 'ok' });
    expect(tree.delegations).toEqual([{ child: 'researcher', outcome: 'delegated', childRunId: child.runId }]);

    const spans = rec.spans();
    const served = runSpan(spans, 'researcher')!;
    const call = delegationSpan(spans)!;
    // execute_tool run_agent → invoke_agent researcher (CLIENT, the caller's hop) → invoke_agent researcher (the served run).
    const hop = clientSpan(spans, 'researcher')!;
    expect(hop.kind).toBe(SpanKind.CLIENT);
    expect(hop.parentSpanContext?.spanId).toBe(call.spanContext().spanId);
    expect(served.spanContext().traceId).toBe(call.spanContext().traceId);
    expect(served.parentSpanContext?.spanId).toBe(hop.spanContext().spanId);
    expect(served.attributes[ATTR.parentRunId]).toBe(reply.runId);
    const port = Number(new URL(researcher.server.url).port);
    expect(hop.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'researcher', 'server.address': '127.0.0.1', 'server.port': port });
    expect(hop.attributes['symfonic.run_id']).toBeUndefined();
    expect(hop.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 40, 'gen_ai.usage.output_tokens': 4 });
  });

  it("absorbs the remote's usage and cost into the caller's totals", async () => {
    const researcher = await serveLeaf('researcher');
    open.push(researcher);
    const routerCollector = collector();
    const reply = await router({ name: 'researcher', url: researcher.server.url, description: 'Finds facts.' }, { collector: routerCollector }).run('q', { scope: { tenantId: 'acme' } });
    // Router: 100+150 in, 10+20 out; researcher: 40 in, 4 out.
    expect(reply.usage).toMatchObject({ inputTokens: 250, outputTokens: 30 });
    expect(reply.totalUsage).toMatchObject({ inputTokens: 290, outputTokens: 34, source: 'reported' });
    const cost = (i: number, o: number) => (i * PRICE.inputPerMTok + o * PRICE.outputPerMTok) / 1e6;
    expect(reply.totalCostUsd).toBeCloseTo(cost(290, 34), 12);
    expect(routerCollector.tenant('acme').usage).toMatchObject({ inputTokens: 290, outputTokens: 34 });
    expect(researcher.collector.tenant('acme').usage).toMatchObject({ inputTokens: 40, outputTokens: 4 });
  });

  it('charges a budget store both sides share once, and a store of its own in full', async () => {
    const spent = (store: InMemoryBudgetStore) => store.usage('acme', undefined, Date.now()).spent.tokens;
    const limits = { acme: { maxTokens: 1_000_000 } };
    const shared = new InMemoryBudgetStore();
    const researcher = await serveLeaf('researcher', { budgets: new TenantBudgets({ limits, store: shared }) });
    open.push(researcher);
    const child = { name: 'researcher', url: researcher.server.url, description: 'Finds facts.' };
    const reply = await router(child, { collector: collector(new TenantBudgets({ limits, store: shared })) }).run('q', { scope: { tenantId: 'acme' } });
    expect(reply.totalUsage.inputTokens + reply.totalUsage.outputTokens).toBe(324);
    // 280 the router's own model calls, 44 the researcher's: once each.
    expect(spent(shared)).toBe(324);

    const own = new InMemoryBudgetStore();
    await router(child, { collector: collector(new TenantBudgets({ limits, store: own })) }).run('q', { scope: { tenantId: 'acme' } });
    expect(spent(own)).toBe(324);
    expect(spent(shared)).toBe(324 + 44);
  });
});

/** Failures across the wire read as the delegation outcomes: aborted, budget_exceeded, child_error. */
import { afterEach, describe, expect, it } from 'vitest';
import { InMemoryBudgetStore, SPAN_ATTRIBUTES as ATTR, TenantBudgets } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { deferred, within } from '../support/async.js';
import { recordEachTest } from '../support/per-test.js';
import { baggage, ext, post, router, runSpan, sendMessageBody, serveLeaf, type Served } from './helpers.js';

const rec = recordEachTest();
const open: Served[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.server.close()));
});

/** A served leaf whose model call takes `ms` (honouring abort) and holds a budget reservation meanwhile. */
async function slowLeaf(ms: number): Promise<Served & { store: InMemoryBudgetStore; started: Promise<void> }> {
  const store = new InMemoryBudgetStore();
  const started = deferred();
  const model = scriptedModel(async () => {
    started.resolve();
    return { text: 'late', delayMs: ms, usage: { inputTokens: 1, outputTokens: 1 } };
  });
  const served = await serveLeaf('researcher', { model, budgets: new TenantBudgets({ limits: { acme: { maxTokens: 1_000_000 } }, store }) });
  open.push(served);
  return { ...served, store, started: started.promise };
}

/** Polls `check` until it holds, for at most `ms`: the served side winds down on its own schedule. */
async function eventually(check: () => boolean, ms: number, what: string): Promise<number> {
  const t0 = performance.now();
  while (!check()) {
    if (performance.now() - t0 > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return performance.now() - t0;
}

describe('abort across the wire', () => {
  it('a parent aborted mid-call ends the remote run aborted, its spans ended and its reservation released, within a second', async () => {
    const leaf = await slowLeaf(30_000);
    const controller = new AbortController();
    const running = router({ name: 'researcher', url: leaf.server.url, description: 'Finds facts.' }).run('q', { scope: { tenantId: 'acme' }, signal: controller.signal });
    await within(leaf.started, 5_000, 'the served model call');
    expect(leaf.store.usage('acme', undefined, Date.now()).reserved.tokens).toBeGreaterThan(0);
    controller.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    const took = await eventually(() => leaf.collector.openRuns === 0 && runSpan(rec.spans(), 'researcher') !== undefined, 1_000, 'the served run ending');
    expect(took).toBeLessThan(1_000);
    expect(leaf.store.usage('acme', undefined, Date.now()).reserved.tokens).toBe(0);
    const served = runSpan(rec.spans(), 'researcher')!;
    expect(served.attributes[ATTR.errorType]).toBe('AbortError');
  });

  it("a remote child's timeoutMs cancels the call (aborted for the caller) and the remote run with it", async () => {
    const leaf = await slowLeaf(30_000);
    const reply = await router({ name: 'researcher', url: leaf.server.url, description: 'Finds facts.', timeoutMs: 200 }).run('q', { scope: { tenantId: 'acme' } });
    expect(reply.finalResponse).toMatch(/Sub-agent "researcher" was aborted before it finished/);
    const tree = rec.tree(reply.runId)!;
    expect(tree.delegations[0]!.outcome).toBe('aborted');
    await eventually(() => leaf.collector.openRuns === 0, 1_000, 'the served run ending');
    expect(leaf.store.usage('acme', undefined, Date.now()).reserved.tokens).toBe(0);
  });

  it("the caller's deadline in baggage stops the served run even if the connection stays open", async () => {
    const leaf = await slowLeaf(30_000);
    const t0 = performance.now();
    const r = await post(leaf.server.url, sendMessageBody('find'), { baggage: baggage({ 'symfonic.deadline': Date.now() + 150 }) });
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(r.json.result.task.status.state).toBe('TASK_STATE_CANCELED');
    expect(ext(r.json.result.task.metadata).failure).toMatchObject({ type: 'aborted' });
    expect(leaf.collector.openRuns).toBe(0);
  });
});

describe('refusals and failures of the remote run', () => {
  it("a remote budget refusal reads as budget_exceeded, with the remote's figures", async () => {
    const leaf = await serveLeaf('researcher', { budgets: new TenantBudgets({ limits: { acme: { maxTokens: 10 } } }) });
    open.push(leaf);
    const reply = await router({ name: 'researcher', url: leaf.server.url, description: 'Finds facts.' }).run('q', { scope: { tenantId: 'acme' } });
    expect(rec.tree(reply.runId)!.delegations[0]!.outcome).toBe('budget_exceeded');
    expect(reply.finalResponse).toMatch(/Sub-agent "researcher" could not run: tenant "acme" is over budget: the tenant's maxTokens limit \(TenantBudgets\) is 10 tokens/);
  });

  it("a remote failure reads as child_error with the remote's message", async () => {
    const leaf = await serveLeaf('researcher', { answer: () => new Error('the index is offline') as never });
    open.push(leaf);
    const reply = await router({ name: 'researcher', url: leaf.server.url, description: 'Finds facts.' }).run('q', { scope: { tenantId: 'acme' } });
    expect(rec.tree(reply.runId)!.delegations[0]!.outcome).toBe('child_error');
    expect(reply.finalResponse).toMatch(/RemoteAgentError: remote agent "researcher": the index is offline/);
  });

  it('an unreachable remote reads as child_error naming the child', async () => {
    const leaf = await serveLeaf('researcher');
    const url = leaf.server.url;
    await leaf.server.close();
    const reply = await router({ name: 'researcher', url, description: 'Finds facts.' }).run('q', { scope: { tenantId: 'acme' } });
    expect(rec.tree(reply.runId)!.delegations[0]!.outcome).toBe('child_error');
    expect(reply.finalResponse).toMatch(/remote agent "researcher"/);
  });
});

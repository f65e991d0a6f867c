/**
 * Every `symfonic.delegation.outcome` on the execute_tool run_agent span, each produced by the
 * real path that leads to it. The parent's turn always goes on: each run still resolves with the
 * parent's final answer, and the model read a tool message explaining what happened.
 */
import { SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { FrameworkConfig, MetricsCollector, SubAgent, SymfonicAgent, TenantBudgets, type AgentResponse } from '../../src/index.js';
import { scriptedModel, type ScriptedModel, type ScriptedTurn } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { attr, delegationSpans, idOf, invokeSpan, parentOf } from './helpers.js';

const rec = recordEachTest();

class FlakyError extends Error {
  override name = 'FlakyError';
}

interface Setup {
  /** The one run_agent call the parent's model makes (arguments raw when a string). */
  call: { name?: string; task?: string } | string;
  /** The child's model. */
  child?: ScriptedModel | SymfonicAgent;
  config?: FrameworkConfig;
  scope?: { tenantId: string };
}

/** A parent whose model makes one run_agent call, then answers; returns the run and its delegation span. */
async function delegateOnce(s: Setup): Promise<{ response: AgentResponse; span: ReadableSpan; parentModel: ScriptedModel; spans: ReadableSpan[] }> {
  const child =
    s.child instanceof SymfonicAgent
      ? s.child
      : new SymfonicAgent({ name: 'worker', modelProvider: s.child ?? scriptedModel(['worker answer']) });
  const parentModel = scriptedModel([
    { toolCalls: [{ name: 'run_agent', arguments: s.call, id: 'call-1' }] } satisfies ScriptedTurn,
    'parent answer',
  ]);
  const parent = new SymfonicAgent({
    name: 'boss',
    modelProvider: parentModel,
    subAgents: [new SubAgent({ name: 'worker', agent: child, description: 'does the work' })],
    ...(s.config ? { config: s.config } : {}),
  });
  const response = await parent.run('do it', { scope: s.scope ?? { tenantId: 'acme' } });
  parentModel.assertComplete();
  const spans = rec.spans();
  const ds = delegationSpans(spans, response.runId);
  expect(ds).toHaveLength(1);
  return { response, span: ds[0]!, parentModel, spans };
}

/** The tool message the parent's model read back for call-1. */
const toolMessage = (m: ScriptedModel): string => m.calls[1]!.messages.find((x) => x.role === 'tool' && x.toolCallId === 'call-1')!.content;

const childRunSpans = (spans: ReadableSpan[]) => spans.filter((s) => s.name === 'invoke_agent worker');

/**
 * The hop was refused before any child run began: `outcome` doubles as the error.type, the span
 * is an error with no child run id, no child run span exists, and `worker` (when given) was never called.
 */
function expectRefusedBeforeChild(span: ReadableSpan, spans: ReadableSpan[], outcome: string, worker?: ScriptedModel): void {
  expect(span.attributes).toMatchObject({ 'symfonic.delegation.outcome': outcome, 'error.type': outcome });
  expect(span.attributes).not.toHaveProperty(['symfonic.delegation.child_run_id']);
  expect(span.status.code).toBe(SpanStatusCode.ERROR);
  expect(childRunSpans(spans)).toHaveLength(0);
  if (worker) expect(worker.calls).toHaveLength(0);
}

/**
 * The child run began and then failed: the span names the worker and its run id, carries `outcome`
 * and `errorType`, and is an error. Returns the child's own run span.
 */
function expectChildRanAndFailed(span: ReadableSpan, spans: ReadableSpan[], outcome: string, errorType: string): ReadableSpan {
  const child = invokeSpan(spans, 'worker');
  expect(span.attributes).toMatchObject({
    'symfonic.delegation.child': 'worker',
    'symfonic.delegation.outcome': outcome,
    'symfonic.delegation.child_run_id': attr(child, 'symfonic.run_id'),
    'error.type': errorType,
  });
  expect(span.status.code).toBe(SpanStatusCode.ERROR);
  return child;
}

describe('execute_tool run_agent outcomes', () => {
  it('delegated: child and child_run_id recorded, status not ERROR, no error.type', async () => {
    const { response, span, spans, parentModel } = await delegateOnce({ call: { name: 'worker', task: 'work' } });
    expect(response.finalResponse).toBe('parent answer');
    const child = invokeSpan(spans, 'worker');
    expect(span.attributes).toMatchObject({
      'symfonic.delegation.child': 'worker',
      'symfonic.delegation.outcome': 'delegated',
      'symfonic.delegation.child_run_id': attr(child, 'symfonic.run_id'),
    });
    expect(span.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(span.attributes).not.toHaveProperty(['error.type']);
    expect(parentOf(child)).toBe(idOf(span));
    expect(toolMessage(parentModel)).toBe('worker answer');
  });

  it('refused_depth: maxAgentDepth 0 refuses the hop; no child runs', async () => {
    const worker = scriptedModel(['never']);
    const { response, span, spans, parentModel } = await delegateOnce({
      call: { name: 'worker', task: 'work' },
      child: worker,
      config: new FrameworkConfig({ agent: { maxAgentDepth: 0 } }),
    });
    expect(response.finalResponse).toBe('parent answer');
    expect(response.delegatedTo).toEqual([]);
    expect(span.attributes).toMatchObject({ 'symfonic.delegation.child': 'worker' });
    expectRefusedBeforeChild(span, spans, 'refused_depth', worker);
    expect(toolMessage(parentModel)).toMatch(/depth/i);
  });

  it('unknown_child: a name not in the roster; the model reads the names that exist', async () => {
    const { response, span, spans, parentModel } = await delegateOnce({ call: { name: 'nobody', task: 'work' } });
    expect(response.finalResponse).toBe('parent answer');
    expect(span.attributes).toMatchObject({ 'symfonic.delegation.child': 'nobody' });
    expectRefusedBeforeChild(span, spans, 'unknown_child');
    expect(toolMessage(parentModel)).toContain('"nobody"');
    expect(toolMessage(parentModel)).toContain('"worker"');
  });

  it("child_error: the child's run rejects; its error name is the error.type", async () => {
    const { response, span, spans, parentModel } = await delegateOnce({
      call: { name: 'worker', task: 'work' },
      child: scriptedModel([new FlakyError('model fell over')]),
    });
    expect(response.finalResponse).toBe('parent answer');
    expect(response.delegatedTo).toEqual(['worker']);
    const child = expectChildRanAndFailed(span, spans, 'child_error', 'FlakyError');
    expect(child.status.code).toBe(SpanStatusCode.ERROR);
    expect(attr(child, 'error.type')).toBe('FlakyError');
    expect(toolMessage(parentModel)).toContain('model fell over');
  });

  it("budget_exceeded: the child's tenant budget cannot cover its first model call", async () => {
    // The child keeps its own collector (a pre-built child does), and that one holds the budget,
    // so the parent's calls are unlimited while the child's first reservation is refused.
    const childModel = scriptedModel(['never reached']);
    const child = new SymfonicAgent({
      name: 'worker',
      modelProvider: childModel,
      metricsCollector: new MetricsCollector({ budgets: new TenantBudgets({ limits: { acme: { maxTokens: 1 } } }) }),
    });
    const { response, span, spans, parentModel } = await delegateOnce({ call: { name: 'worker', task: 'work' }, child });
    expect(response.finalResponse).toBe('parent answer');
    expectChildRanAndFailed(span, spans, 'budget_exceeded', 'BudgetExceededError');
    expect(childModel.calls).toHaveLength(0);
    expect(toolMessage(parentModel)).toContain('acme');
  });

  it('aborted: a child that outlives childTimeoutMs is stopped; the parent goes on', async () => {
    const hanging = scriptedModel([{ text: 'too late', delayMs: 60_000 }]);
    const { response, span, spans, parentModel } = await delegateOnce({
      call: { name: 'worker', task: 'work' },
      child: hanging,
      config: new FrameworkConfig({ agent: { childTimeoutMs: 50 } }),
    });
    expect(response.finalResponse).toBe('parent answer');
    const child = expectChildRanAndFailed(span, spans, 'aborted', 'TimeoutError');
    expect(child.status.code).toBe(SpanStatusCode.ERROR);
    expect(toolMessage(parentModel)).toMatch(/timed out/);
  }, 10_000);

  it('invalid_request: arguments that are not JSON', async () => {
    const worker = scriptedModel(['never']);
    const { response, span, spans, parentModel } = await delegateOnce({ call: '{"name": "worker", "task": ', child: worker });
    expect(response.finalResponse).toBe('parent answer');
    expectRefusedBeforeChild(span, spans, 'invalid_request', worker);
    // No name could be read from the arguments, so none is claimed.
    expect(span.attributes).not.toHaveProperty(['symfonic.delegation.child']);
    expect(toolMessage(parentModel)).toMatch(/not valid JSON/);
  });

  it('invalid_request: an empty task', async () => {
    const worker = scriptedModel(['never']);
    const { response, span, spans, parentModel } = await delegateOnce({ call: { name: 'worker', task: '   ' }, child: worker });
    expect(response.finalResponse).toBe('parent answer');
    expect(response.delegatedTo).toEqual([]);
    expect(span.attributes).toMatchObject({ 'symfonic.delegation.child': 'worker' });
    expectRefusedBeforeChild(span, spans, 'invalid_request', worker);
    expect(toolMessage(parentModel)).toMatch(/empty/);
  });

  it('every outcome leaves lineage intact', async () => {
    await delegateOnce({ call: { name: 'worker', task: 'work' }, child: scriptedModel([new FlakyError('x')]) });
    await delegateOnce({ call: { name: 'nobody', task: 'work' } });
    rec.assertLineage();
  });
});

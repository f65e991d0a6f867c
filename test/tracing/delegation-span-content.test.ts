/**
 * What an execute_tool run_agent span says of its child is written from the call's data by one
 * function, as the call learns each part: so a span whose call never reached an outcome (the
 * child's failure ended the whole run) still names the child it tried, beside that child's run id.
 */
import { SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { SubAgent, SymfonicAgent } from '../../src/index.js';
import { ScriptError, scriptedModel } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { callsThenAnswer, runAgent } from '../delegation/helpers.js';
import { runSpanById } from './helpers.js';

const rec = recordEachTest();

describe('the delegation span names its child whatever ends the call', () => {
  it('a child whose error fails the run: the span names the child and its run, and is failed', async () => {
    // A scripted model with no turns left throws a ScriptError: an error that fails the whole run.
    const child = new SymfonicAgent({ name: 'child', modelProvider: scriptedModel([]) });
    const parent = new SymfonicAgent({
      name: 'parent',
      modelProvider: scriptedModel(callsThenAnswer([runAgent('child', 'x')])),
      subAgents: [new SubAgent({ name: 'child', agent: child, description: 'd' })],
    });
    await expect(parent.run('go', { scope: { tenantId: 'acme' } })).rejects.toBeInstanceOf(ScriptError);
    const spans = rec.spans();
    const span = spans.find((s) => s.name === 'execute_tool run_agent');
    expect(span).toBeDefined();
    const childRunId = span!.attributes['symfonic.delegation.child_run_id'];
    expect(typeof childRunId).toBe('string');
    // The run it names is the child's run, under this span.
    expect(runSpanById(spans, childRunId as string).parentSpanContext?.spanId).toBe(span!.spanContext().spanId);
    expect(span!.attributes['symfonic.delegation.child']).toBe('child');
    // No outcome: the call did not end as a delegation does; the run failed, and the span with it.
    expect(span!.attributes).not.toHaveProperty(['symfonic.delegation.outcome']);
    expect(span!.status.code).toBe(SpanStatusCode.ERROR);
    expect(span!.attributes['error.type']).toBe('ScriptError');
  });
});

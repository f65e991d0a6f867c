/**
 * A library must work in an application that never installs an OpenTelemetry SDK: the API hands
 * out non-recording spans, and delegation, lineage and accounting go on without them. This file
 * never calls recordTelemetry or startTelemetry, so no SDK is registered in its process.
 */
import { trace } from '@opentelemetry/api';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { defineTool, SubAgent, SymfonicAgent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { collectingLogger } from '../support/logging.js';
import { costOf, pricedCollector, ROOT_QUERY, threeLevelTree, USAGE } from './helpers.js';

describe('with no SDK registered', () => {
  it('the API gives non-recording spans', () => {
    const s = trace.getTracer('probe').startSpan('probe');
    expect(s.isRecording()).toBe(false);
    s.end();
  });

  it('a three-level delegation runs, with lineage, usage and cost intact', async () => {
    const { logger, lines } = collectingLogger('debug');
    const { assistant } = threeLevelTree({ collector: pricedCollector(), logger });
    const response = await assistant.run(ROOT_QUERY, { scope: { tenantId: 'acme' } });
    expect(response.finalResponse).toBe('Paris is sunny today.');
    expect(response.parentRunId).toBeNull();
    expect(response.rootRunId).toBe(response.runId);
    expect(response.delegatedTo).toEqual(['researcher']);
    const all = [...USAGE.assistant, ...USAGE.researcher, ...USAGE.fetcher];
    const total = all.reduce((a, u) => ({ inputTokens: a.inputTokens + u.inputTokens, outputTokens: a.outputTokens + u.outputTokens }), {
      inputTokens: 0,
      outputTokens: 0,
    });
    expect(response.totalUsage).toMatchObject(total);
    expect(response.totalCostUsd).toBeCloseTo(costOf(total), 12);
    // lineage still reaches the logs: three runs, each naming the root
    const runIds = new Set(lines.map((l) => l.run_id));
    expect(runIds.size).toBe(3);
    for (const l of lines) expect(l.root_run_id).toBe(response.runId);
    // No span, no trace: all-zero placeholder ids would only send a reader looking for nothing.
    for (const l of lines) {
      expect(l).not.toHaveProperty('trace_id');
      expect(l).not.toHaveProperty('span_id');
    }
  });

  it('a tool sees no active span, and a failing child still only fails its own delegation', async () => {
    let sawSpan: unknown = 'not called';
    const probe = defineTool({
      name: 'probe',
      description: 'Looks at the active span.',
      input: z.object({}),
      execute: () => {
        sawSpan = trace.getActiveSpan()?.isRecording() ?? null;
        return 'probed';
      },
    });
    const broken = new SymfonicAgent({ name: 'broken', modelProvider: scriptedModel(() => new Error('boom')) });
    const agent = new SymfonicAgent({
      name: 'top',
      modelProvider: scriptedModel([
        {
          toolCalls: [
            { name: 'probe', arguments: {}, id: 'p' },
            { name: 'run_agent', arguments: { name: 'broken', task: 'try' }, id: 'r' },
          ],
        },
        'done',
      ]),
      tools: [probe],
      subAgents: [new SubAgent({ name: 'broken', agent: broken, description: 'fails' })],
    });
    const r = await agent.run('go');
    expect(r.finalResponse).toBe('done');
    expect(r.delegatedTo).toEqual(['broken']);
    // no SDK: either no active span at all, or one that records nothing
    expect(sawSpan === null || sawSpan === false).toBe(true);
    const toolMessages = r.messages.filter((m) => m.role === 'tool');
    expect(toolMessages.find((m) => m.toolCallId === 'r')!.content).toContain('boom');
  });
});

import { SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SubAgent, SymfonicAgent, defineTool, type ModelRequest } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { spyChild, toolResults } from '../delegation/helpers.js';
import { recordEachTest } from '../support/per-test.js';

const rec = recordEachTest();
const deepArray = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

function lead(toolCalls: { name: string; arguments: unknown }[], extra: { tools?: ReturnType<typeof defineTool>[] } = {}) {
  const child = spyChild();
  const model = scriptedModel((req: ModelRequest, i) => (i === 0 ? { toolCalls } : `read: ${toolResults(req).join(' | ')}`));
  const agent = new SymfonicAgent({ name: 'lead', modelProvider: model, subAgents: [new SubAgent({ name: 'worker', agent: child, description: 'works' })], ...extra });
  return { agent, child, model };
}

describe('deep or huge arguments never reject the run', () => {
  it('a run_agent task nested 5,000 arrays deep becomes a tool message; the parent goes on', async () => {
    const { agent, child } = lead([{ name: 'run_agent', arguments: `{"name":"worker","task":${deepArray(5000)}}` }]);
    const r = await agent.run('go');
    expect(r.finalResponse).toMatch(/^read: run_agent refused: the task for "worker" is nested too deeply/);
    expect(child.calls).toHaveLength(0);
    const span = rec.spans().find((s) => s.name === 'execute_tool run_agent')!;
    expect(span.attributes['symfonic.delegation.outcome']).toBe('invalid_request');
  });

  it('a structured task with nested objects reaches the child whole, as JSON', async () => {
    const task = { brief: { topic: 'tides', sources: [{ url: 'a', notes: { depth: [1, 2, { x: 'y' }] } }] } };
    const { agent, child } = lead([{ name: 'run_agent', arguments: { name: 'worker', task } }]);
    await agent.run('go');
    expect(child.calls).toHaveLength(1);
    expect(JSON.parse(child.calls[0]!.task)).toEqual(task);
    expect(child.calls[0]!.task).not.toContain('[object Object]');
  });

  it('a user tool given arguments nested 100,000 deep gets a tool message, not a rejected run', async () => {
    const echo = defineTool({ name: 'echo', description: 'Echoes.', input: z.object({ v: z.unknown() }), execute: ({ v }) => v });
    const nested = defineTool({ name: 'nested', description: 'Takes nested lists.', input: z.object({ v: z.array(z.any()) }), execute: () => 'ok' });
    const { agent } = lead(
      [
        { name: 'echo', arguments: `{"v":${deepArray(100_000)}}` },
        { name: 'nested', arguments: `{"v":${deepArray(5000)}}` },
      ],
      { tools: [echo, nested] },
    );
    const r = await agent.run('go');
    expect(r.finalResponse).toMatch(/^read: /);
    const toolSpans = rec.spans().filter((s) => s.name === 'execute_tool echo' || s.name === 'execute_tool nested');
    expect(toolSpans).toHaveLength(2);
  });
});

describe('what reaches telemetry from the model and from error text', () => {
  it('a model-chosen unknown tool name is capped before it reaches a span name or attribute', async () => {
    const long = 'x'.repeat(5000);
    const { agent } = lead([{ name: long, arguments: {} }]);
    const r = await agent.run('go');
    expect(r.finalResponse).toMatch(/there is no tool named "x{64}…"/);
    const span = rec.spans().find((s) => s.name.startsWith('execute_tool x'))!;
    expect(span.name.length).toBeLessThanOrEqual('execute_tool '.length + 65);
    expect(String(span.attributes['gen_ai.tool.name']).length).toBeLessThanOrEqual(65);
    expect(span.attributes['error.type']).toBe('unknown_tool');
  });

  it('an API key or bearer token in an error message is redacted from span status and events', async () => {
    const key = 'sk-proj-abcdefghijklmnopqrstuvwx1234567890';
    const model = scriptedModel([new Error(`401 from upstream: {"error":"invalid key ${key}","auth":"Bearer abc.def.ghi-jkl"}`)]);
    const agent = new SymfonicAgent({ name: 'leaky', modelProvider: model });
    await expect(agent.run('q')).rejects.toThrow();
    for (const span of rec.spans()) {
      expect(span.status.code).toBe(SpanStatusCode.ERROR);
      const text = JSON.stringify({ status: span.status, events: span.events, attributes: span.attributes });
      expect(text).not.toContain(key);
      expect(text).not.toContain('abc.def.ghi-jkl');
      expect(text).toContain('[REDACTED]');
    }
  });
});

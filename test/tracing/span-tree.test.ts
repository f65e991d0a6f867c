/**
 * The span tree a delegation leaves behind, read from the real OpenTelemetry SDK through
 * recordTelemetry(): names, kinds and attributes as DESIGN.md "Telemetry names" fixes them, the
 * lineage on every span, parentage across delegations, parallel delegations and concurrent roots.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { FrameworkConfig, SubAgent, SymfonicAgent } from '../../src/index.js';
import { barrier } from '../support/async.js';
import { recordEachTest } from '../support/per-test.js';
import {
  attr,
  costOf,
  delegationSpans,
  idOf,
  invokeSpan,
  only,
  parentOf,
  pricedCollector,
  RESEARCH_TASK,
  ROOT_QUERY,
  runSpanById,
  threeLevelTree,
  toolThenAnswer,
  USAGE,
} from './helpers.js';

const rec = recordEachTest();

const LINEAGE_KEYS = ['symfonic.run_id', 'symfonic.root_run_id', 'symfonic.agent_depth', 'symfonic.tenant_id'];
const add = (a: { inputTokens: number; outputTokens: number }, b: { inputTokens: number; outputTokens: number }) => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
});

describe('a three-level delegation on the in-memory SDK', () => {
  async function runTree() {
    const { assistant } = threeLevelTree({ collector: pricedCollector() });
    const response = await assistant.run(ROOT_QUERY, { scope: { tenantId: 'acme' } });
    const spans = rec.spans();
    const root = invokeSpan(spans, 'assistant');
    const researcher = invokeSpan(spans, 'researcher');
    const fetcher = invokeSpan(spans, 'fetcher');
    return { response, spans, root, researcher, fetcher };
  }

  it('names and kinds: one invoke_agent per run, a chat per model call, an execute_tool per tool call', async () => {
    const { spans } = await runTree();
    expect(spans.map((s) => s.name).sort()).toEqual(
      [
        'invoke_agent assistant',
        'chat scripted-model',
        'chat scripted-model',
        'execute_tool run_agent',
        'invoke_agent researcher',
        'chat scripted-model',
        'chat scripted-model',
        'execute_tool run_agent',
        'invoke_agent fetcher',
        'chat scripted-model',
        'chat scripted-model',
        'execute_tool lookup',
      ].sort(),
    );
    for (const s of spans) {
      const expected = s.name.startsWith('chat ') ? SpanKind.CLIENT : SpanKind.INTERNAL;
      expect({ name: s.name, kind: s.kind }).toEqual({ name: s.name, kind: expected });
    }
  });

  it('GenAI attributes on invoke_agent, chat and execute_tool spans', async () => {
    const { spans, root, fetcher } = await runTree();
    expect(root.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'assistant',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'scripted-model',
      'gen_ai.usage.input_tokens': USAGE.assistant[0].inputTokens + USAGE.assistant[1].inputTokens,
      'gen_ai.usage.output_tokens': USAGE.assistant[0].outputTokens + USAGE.assistant[1].outputTokens,
    });
    const rootRunId = attr(root, 'symfonic.run_id');
    const rootChats = spans.filter((s) => s.name.startsWith('chat ') && attr(s, 'symfonic.run_id') === rootRunId);
    expect(rootChats).toHaveLength(2);
    const [first, second] = rootChats.sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    expect(first!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'scripted-model',
      'gen_ai.response.model': 'scripted-model',
      'gen_ai.usage.input_tokens': USAGE.assistant[0].inputTokens,
      'gen_ai.usage.output_tokens': USAGE.assistant[0].outputTokens,
      'gen_ai.response.finish_reasons': ['tool_calls'],
    });
    expect(second!.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': USAGE.assistant[1].inputTokens,
      'gen_ai.usage.output_tokens': USAGE.assistant[1].outputTokens,
      'gen_ai.response.finish_reasons': ['stop'],
    });
    const lookup = only(spans, 'execute_tool lookup', (s) => s.name === 'execute_tool lookup');
    expect(lookup.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup',
      'gen_ai.tool.call.id': 'call-fetch-1',
      'gen_ai.tool.type': 'function',
    });
    expect(parentOf(lookup)).toBe(idOf(fetcher));
    const delegation = delegationSpans(spans, rootRunId as string)[0]!;
    expect(delegation.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'run_agent',
      'gen_ai.tool.call.id': 'call-root-1',
      'gen_ai.tool.type': 'function',
    });
    for (const s of spans) expect(s.status.code, s.name).not.toBe(SpanStatusCode.ERROR);
  });

  it('every span of a run carries that run\'s lineage; parent_run_id is absent only on the root', async () => {
    const { spans, response, root, researcher, fetcher } = await runTree();
    const runs = [root, researcher, fetcher];
    const ids = runs.map((r) => attr(r, 'symfonic.run_id') as string);
    expect(new Set(ids).size).toBe(3);
    expect(ids[0]).toBe(response.runId);
    const expected = [
      { run: ids[0], parent: undefined, depth: 0 },
      { run: ids[1], parent: ids[0], depth: 1 },
      { run: ids[2], parent: ids[1], depth: 2 },
    ];
    for (const e of expected) {
      const ofRun = spans.filter((s) => attr(s, 'symfonic.run_id') === e.run);
      // invoke_agent, two chats and one execute_tool per run
      expect(ofRun).toHaveLength(4);
      for (const s of ofRun) {
        for (const k of LINEAGE_KEYS) expect(s.attributes, `${s.name} lacks ${k}`).toHaveProperty([k]);
        expect(attr(s, 'symfonic.root_run_id')).toBe(response.runId);
        expect(attr(s, 'symfonic.parent_run_id')).toBe(e.parent);
        expect(attr(s, 'symfonic.agent_depth')).toBe(e.depth);
        expect(attr(s, 'symfonic.tenant_id')).toBe('acme');
      }
    }
    // no span escaped the three runs
    expect(spans.every((s) => ids.includes(attr(s, 'symfonic.run_id') as string))).toBe(true);
    expect(Object.keys(root.attributes)).not.toContain('symfonic.parent_run_id');
  });

  it("a child's invoke_agent span is a child of the execute_tool run_agent span that started it", async () => {
    const { spans, root, researcher, fetcher } = await runTree();
    expect(parentOf(root)).toBeUndefined();
    const rootDelegation = delegationSpans(spans, attr(root, 'symfonic.run_id') as string);
    const researcherDelegation = delegationSpans(spans, attr(researcher, 'symfonic.run_id') as string);
    expect(rootDelegation).toHaveLength(1);
    expect(researcherDelegation).toHaveLength(1);
    expect(parentOf(rootDelegation[0]!)).toBe(idOf(root));
    expect(parentOf(researcher)).toBe(idOf(rootDelegation[0]!));
    expect(parentOf(researcherDelegation[0]!)).toBe(idOf(researcher));
    expect(parentOf(fetcher)).toBe(idOf(researcherDelegation[0]!));
    expect(rootDelegation[0]!.attributes).toMatchObject({
      'symfonic.delegation.child': 'researcher',
      'symfonic.delegation.child_run_id': attr(researcher, 'symfonic.run_id'),
      'symfonic.delegation.outcome': 'delegated',
    });
    const traceIds = new Set(spans.map((s) => s.spanContext().traceId));
    expect(traceIds.size).toBe(1);
  });

  it('invoke_agent spans end with subtree token totals and cost from the collector', async () => {
    const { response, root, researcher, fetcher } = await runTree();
    const own = {
      assistant: add(USAGE.assistant[0], USAGE.assistant[1]),
      researcher: add(USAGE.researcher[0], USAGE.researcher[1]),
      fetcher: add(USAGE.fetcher[0], USAGE.fetcher[1]),
    };
    const totals = {
      fetcher: own.fetcher,
      researcher: add(own.researcher, own.fetcher),
      assistant: add(own.assistant, add(own.researcher, own.fetcher)),
    };
    for (const [span, name] of [
      [root, 'assistant'],
      [researcher, 'researcher'],
      [fetcher, 'fetcher'],
    ] as [ReadableSpan, keyof typeof own][]) {
      expect(span.attributes, name).toMatchObject({
        'gen_ai.usage.input_tokens': own[name].inputTokens,
        'gen_ai.usage.output_tokens': own[name].outputTokens,
        'symfonic.usage.total_input_tokens': totals[name].inputTokens,
        'symfonic.usage.total_output_tokens': totals[name].outputTokens,
      });
      expect(attr(span, 'symfonic.cost.usd') as number).toBeCloseTo(costOf(own[name]), 12);
      expect(attr(span, 'symfonic.cost.total_usd') as number).toBeCloseTo(costOf(totals[name]), 12);
    }
    expect(response.totalUsage).toMatchObject(totals.assistant);
    expect(response.totalCostUsd).toBeCloseTo(attr(root, 'symfonic.cost.total_usd') as number, 12);
  });
});

describe('concurrency', () => {
  it('three run_agent calls in one turn: three execute_tool spans under the run, each child under its own', async () => {
    const gate = barrier(3);
    // Each child answers only after all three have reached their model: proof they run at once.
    const makeChild = (name: string) =>
      new SubAgent({
        name,
        description: `the ${name} specialist`,
        agent: new SymfonicAgent({
          name,
          modelProvider: {
            providerName: 'scripted',
            modelName: 'scripted-model',
            async generate() {
              await gate.arrive();
              return { text: `${name} done`, toolCalls: [], finishReason: 'stop' };
            },
          },
        }),
      });
    const coordinatorModel = toolThenAnswer(
      ['alpha', 'beta', 'gamma'].map((n, i) => ({ name: 'run_agent', arguments: { name: n, task: `part ${i + 1}` }, id: `call-${n}` })),
      'all done',
    );
    const root = new SymfonicAgent({ name: 'coordinator', modelProvider: coordinatorModel, subAgents: ['alpha', 'beta', 'gamma'].map(makeChild) });
    const response = await root.run('split this three ways', { scope: { tenantId: 'acme' } });
    expect(response.finalResponse).toBe('all done');
    expect(response.delegatedTo).toEqual(['alpha', 'beta', 'gamma']);
    // One turn: the model's second call already holds all three results, after one assistant turn.
    expect(coordinatorModel.calls).toHaveLength(2);
    expect(coordinatorModel.calls[1]!.messages.map((m) => (m.role === 'tool' ? `tool:${m.toolCallId}` : m.role))).toEqual([
      'user',
      'assistant',
      'tool:call-alpha',
      'tool:call-beta',
      'tool:call-gamma',
    ]);
    const spans = rec.spans();
    const rootSpan = runSpanById(spans, response.runId);
    const tools = delegationSpans(spans, response.runId);
    expect(tools).toHaveLength(3);
    for (const t of tools) {
      expect(parentOf(t)).toBe(idOf(rootSpan));
      expect(attr(t, 'symfonic.delegation.outcome')).toBe('delegated');
    }
    const byChild = new Map(tools.map((t) => [attr(t, 'symfonic.delegation.child') as string, t]));
    expect([...byChild.keys()].sort()).toEqual(['alpha', 'beta', 'gamma']);
    const childRunIds = new Set<string>();
    for (const name of ['alpha', 'beta', 'gamma']) {
      const tool = byChild.get(name)!;
      const child = invokeSpan(spans, name);
      expect(parentOf(child)).toBe(idOf(tool));
      expect(attr(child, 'symfonic.run_id')).toBe(attr(tool, 'symfonic.delegation.child_run_id'));
      expect(attr(child, 'symfonic.parent_run_id')).toBe(response.runId);
      expect(attr(tool, 'gen_ai.tool.call.id')).toBe(`call-${name}`);
      childRunIds.add(attr(child, 'symfonic.run_id') as string);
    }
    expect(childRunIds.size).toBe(3);
    rec.assertLineage();
  });

  it('two roots started together and interleaved: two traces, nothing of one parented into the other', async () => {
    const rootsMet = barrier(2);
    const childrenMet = barrier(2);
    // The helper's model holds each child until the other root's child is also in flight.
    const helperAgent = new SymfonicAgent({
      name: 'helper',
      modelProvider: {
        providerName: 'scripted',
        modelName: 'scripted-model',
        async generate(req) {
          await childrenMet.arrive();
          return { text: `helped with: ${req.messages[0]!.content}`, toolCalls: [], finishReason: 'stop' };
        },
      },
    });
    const root = new SymfonicAgent({
      name: 'front',
      modelProvider: toolThenAnswer([{ name: 'run_agent', arguments: { name: 'helper', task: 'assist' }, id: 'c1' }], 'front done', {
        gate: () => rootsMet.arrive(),
      }),
      subAgents: [new SubAgent({ name: 'helper', agent: helperAgent, description: 'helps' })],
    });
    const [a, b] = await Promise.all([
      root.run('first', { scope: { tenantId: 'acme' } }),
      root.run('second', { scope: { tenantId: 'globex' } }),
    ]);
    const spans = rec.spans();
    expect(spans).toHaveLength(2 * (1 + 2 + 1) + 2 * (1 + 1));
    const byId = new Map(spans.map((s) => [idOf(s), s]));
    const traceOf = (runId: string) => runSpanById(spans, runId).spanContext().traceId;
    expect(traceOf(a.runId)).not.toBe(traceOf(b.runId));
    for (const [resp, tenant] of [
      [a, 'acme'],
      [b, 'globex'],
    ] as const) {
      const trace = traceOf(resp.runId);
      const mine = spans.filter((s) => s.spanContext().traceId === trace);
      expect(mine).toHaveLength(6);
      for (const s of mine) {
        expect(attr(s, 'symfonic.root_run_id'), s.name).toBe(resp.runId);
        expect(attr(s, 'symfonic.tenant_id'), s.name).toBe(tenant);
        const p = parentOf(s);
        if (p === undefined) {
          expect(attr(s, 'symfonic.run_id')).toBe(resp.runId);
          continue;
        }
        const parent = byId.get(p);
        expect(parent, `parent of ${s.name} was recorded`).toBeDefined();
        expect(parent!.spanContext().traceId).toBe(trace);
        expect(attr(parent!, 'symfonic.root_run_id')).toBe(resp.runId);
      }
    }
    rec.assertLineage();
  });
});

describe('content capture', () => {
  const CONTENT_KEYS = ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result', 'gen_ai.system_instructions'];

  it('is off by default: no message content on any span', async () => {
    const { assistant } = threeLevelTree();
    await assistant.run(ROOT_QUERY, { scope: { tenantId: 'acme' } });
    const spans = rec.spans();
    expect(spans.length).toBe(12);
    for (const s of spans) {
      for (const k of CONTENT_KEYS) expect(Object.keys(s.attributes), `${s.name} has ${k}`).not.toContain(k);
      // the query, task and answers appear in no attribute value either
      for (const v of Object.values(s.attributes)) {
        for (const text of [ROOT_QUERY, RESEARCH_TASK, 'forecast for Paris']) expect(String(v)).not.toContain(text);
      }
    }
  });

  it('when on, chat and tool spans carry content in the conventions\' JSON form', async () => {
    const config = new FrameworkConfig({ captureContent: true });
    const { assistant } = threeLevelTree({ config });
    const response = await assistant.run(ROOT_QUERY, { scope: { tenantId: 'acme' } });
    const spans = rec.spans();
    const chats = spans
      .filter((s) => s.name.startsWith('chat ') && attr(s, 'symfonic.run_id') === response.runId)
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    expect(chats).toHaveLength(2);

    const firstInput = JSON.parse(attr(chats[0]!, 'gen_ai.input.messages') as string);
    expect(firstInput).toEqual([{ role: 'user', parts: [{ type: 'text', content: ROOT_QUERY }] }]);
    const firstOutput = JSON.parse(attr(chats[0]!, 'gen_ai.output.messages') as string);
    expect(firstOutput).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'call-root-1', name: 'run_agent', arguments: { name: 'researcher', task: RESEARCH_TASK } }],
        finish_reason: 'tool_calls',
      },
    ]);

    const secondInput = JSON.parse(attr(chats[1]!, 'gen_ai.input.messages') as string) as { role: string; parts: Record<string, unknown>[] }[];
    expect(secondInput.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(secondInput[2]!.parts).toEqual([{ type: 'tool_call_response', id: 'call-root-1', response: 'It is sunny in Paris.' }]);
    expect(JSON.parse(attr(chats[1]!, 'gen_ai.output.messages') as string)).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Paris is sunny today.' }], finish_reason: 'stop' },
    ]);

    const delegation = delegationSpans(spans, response.runId)[0]!;
    expect(JSON.parse(attr(delegation, 'gen_ai.tool.call.arguments') as string)).toEqual({ name: 'researcher', task: RESEARCH_TASK });
    expect(attr(delegation, 'gen_ai.tool.call.result')).toBe('It is sunny in Paris.');

    // The child's first chat sees only its task: the parent's conversation stays with the parent.
    const researcherRun = attr(invokeSpan(spans, 'researcher'), 'symfonic.run_id');
    const researcherChats = spans
      .filter((s) => s.name.startsWith('chat ') && attr(s, 'symfonic.run_id') === researcherRun)
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    expect(JSON.parse(attr(researcherChats[0]!, 'gen_ai.input.messages') as string)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: RESEARCH_TASK }] },
    ]);
    const lookup = only(spans, 'execute_tool lookup', (s) => s.name === 'execute_tool lookup');
    expect(attr(lookup, 'gen_ai.tool.call.result')).toBe('forecast for Paris: sunny');
  });
});

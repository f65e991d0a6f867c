/**
 * Shared builders for the tracing suite: a three-level delegation tree on scripted models and a
 * few lookups over finished spans.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { defineTool, FrameworkConfig, MetricsCollector, priceTable, SubAgent, SymfonicAgent, type Logger, type Tool } from '../../src/index.js';
import { scriptedModel, type ScriptedModel, type ScriptedTurn } from '../../src/testing/index.js';
import type { ModelRequest } from '../../src/index.js';

type Usage = { inputTokens: number; outputTokens: number };
type Call = { name: string; arguments: unknown; id?: string };

/**
 * A responder model: the first turn of a conversation calls `calls`, and once a tool result is
 * the last message it answers `final`. Keyed on the request, not on a call counter, so one model
 * can serve concurrent runs. `gate` is awaited before the first turn (a barrier, or a hang).
 */
export function toolThenAnswer(
  calls: Call[],
  final: string,
  opts: { usage?: [Usage, Usage]; gate?: (req: ModelRequest) => Promise<void>; modelName?: string } = {},
): ScriptedModel {
  return scriptedModel(
    async (req): Promise<ScriptedTurn> => {
      const last = req.messages[req.messages.length - 1];
      if (last?.role === 'tool') return { text: final, ...(opts.usage ? { usage: opts.usage[1] } : {}) };
      await opts.gate?.(req);
      return { toolCalls: calls, ...(opts.usage ? { usage: opts.usage[0] } : {}) };
    },
    opts.modelName !== undefined ? { modelName: opts.modelName } : {},
  );
}

/** Scripted usage of the three-level tree, per agent: [first turn, second turn]. */
export const USAGE = {
  assistant: [{ inputTokens: 100, outputTokens: 10 }, { inputTokens: 150, outputTokens: 20 }],
  researcher: [{ inputTokens: 40, outputTokens: 4 }, { inputTokens: 60, outputTokens: 6 }],
  fetcher: [{ inputTokens: 7, outputTokens: 1 }, { inputTokens: 9, outputTokens: 2 }],
} as const satisfies Record<string, [Usage, Usage]>;

/** USD per million tokens for the scripted model: round numbers so costs are easy to check. */
export const PRICE = { inputPerMTok: 2, outputPerMTok: 10 };
export const costOf = (u: Usage): number => (u.inputTokens * PRICE.inputPerMTok + u.outputTokens * PRICE.outputPerMTok) / 1e6;

export function pricedCollector(): MetricsCollector {
  return new MetricsCollector({ prices: priceTable({ 'scripted-model': PRICE }) });
}

export const ROOT_QUERY = 'Summarise the weather in Paris.';
export const RESEARCH_TASK = 'Find the current weather in Paris.';
export const FETCH_TASK = 'Fetch the Paris forecast.';

export interface TreeOptions {
  collector?: MetricsCollector;
  logger?: Logger;
  config?: FrameworkConfig;
}

/**
 * assistant → researcher → fetcher, each a pre-built SymfonicAgent; the fetcher's model calls
 * its own `lookup` tool, which logs through ctx.logger. Every agent answers in two model calls.
 */
export function threeLevelTree(o: TreeOptions = {}) {
  const shared = {
    ...(o.collector ? { metricsCollector: o.collector } : {}),
    ...(o.logger ? { logger: o.logger } : {}),
    ...(o.config ? { config: o.config } : {}),
  };
  const lookup: Tool = defineTool({
    name: 'lookup',
    description: 'Looks up a forecast.',
    input: z.object({ query: z.string() }),
    execute: ({ query }, ctx) => {
      ctx.logger.info({ query }, 'lookup called');
      return `forecast for ${query}: sunny`;
    },
  }) as Tool;
  const fetcher = new SymfonicAgent({
    name: 'fetcher',
    modelProvider: toolThenAnswer([{ name: 'lookup', arguments: { query: 'Paris' }, id: 'call-fetch-1' }], 'Paris: sunny', {
      usage: USAGE.fetcher,
    }),
    tools: [lookup],
    ...shared,
  });
  const researcher = new SymfonicAgent({
    name: 'researcher',
    modelProvider: toolThenAnswer([{ name: 'run_agent', arguments: { name: 'fetcher', task: FETCH_TASK }, id: 'call-res-1' }], 'It is sunny in Paris.', {
      usage: USAGE.researcher,
    }),
    subAgents: [new SubAgent({ name: 'fetcher', agent: fetcher, description: 'Fetches raw forecasts.' })],
    ...shared,
  });
  const assistant = new SymfonicAgent({
    name: 'assistant',
    modelProvider: toolThenAnswer([{ name: 'run_agent', arguments: { name: 'researcher', task: RESEARCH_TASK }, id: 'call-root-1' }], 'Paris is sunny today.', {
      usage: USAGE.assistant,
    }),
    subAgents: [new SubAgent({ name: 'researcher', agent: researcher, description: 'Researches facts.' })],
    ...shared,
  });
  return { assistant, researcher, fetcher };
}

// ---------------------------------------------------------------------------------------------
// span lookups

export const attr = (s: ReadableSpan, key: string): unknown => s.attributes[key];
export const parentOf = (s: ReadableSpan): string | undefined => s.parentSpanContext?.spanId;
export const idOf = (s: ReadableSpan): string => s.spanContext().spanId;

/** The single span matching `pred`; throws naming what was looked for when there are 0 or 2+. */
export function only(spans: readonly ReadableSpan[], what: string, pred: (s: ReadableSpan) => boolean): ReadableSpan {
  const hits = spans.filter(pred);
  if (hits.length !== 1) throw new Error(`expected one span ${what}, found ${hits.length}: ${spans.map((s) => s.name).join(', ')}`);
  return hits[0]!;
}

export const invokeSpan = (spans: readonly ReadableSpan[], agent: string): ReadableSpan =>
  only(spans, `invoke_agent ${agent}`, (s) => s.name === `invoke_agent ${agent}`);

export const runSpanById = (spans: readonly ReadableSpan[], runId: string): ReadableSpan =>
  only(spans, `invoke_agent for run ${runId}`, (s) => s.attributes['gen_ai.operation.name'] === 'invoke_agent' && s.attributes['symfonic.run_id'] === runId);

/** The execute_tool run_agent spans of one run, in start order. */
export function delegationSpans(spans: readonly ReadableSpan[], runId: string): ReadableSpan[] {
  return spans
    .filter((s) => s.name === 'execute_tool run_agent' && s.attributes['symfonic.run_id'] === runId)
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
}

/**
 * The streaming suite's tree, shaped like the demo's: a root that starts two children in one
 * turn, one of which delegates to a grandchild. Every model streams its answers in pieces.
 */
import { MetricsCollector, SubAgent, SymfonicAgent, priceTable, type ModelRequest } from '../../src/index.js';
import type { RunEvent } from '../../src/agent/run-events.js';
import { scriptedModel, type ScriptedModel, type ScriptedTurn } from '../../src/testing/index.js';

type Usage = { inputTokens: number; outputTokens: number };

export const PRICES = priceTable({ 'stream-model': { inputPerMTok: 2, outputPerMTok: 8 } });

const afterTool = (r: ModelRequest) => r.messages[r.messages.length - 1]?.role === 'tool';

/**
 * A model that delegates to `children` (all in one turn) and then answers in `pieces`; with no
 * children it answers at once. Keyed on the conversation, so concurrent runs never share turns.
 */
export function streamingModel(children: string[], pieces: string[], usage: [Usage, Usage], opts: { chunkDelayMs?: number; delayMs?: number } = {}): ScriptedModel {
  return scriptedModel(
    (req): ScriptedTurn => {
      if (children.length > 0 && !afterTool(req)) {
        return {
          chunks: ['Delegating ', 'now.'],
          toolCalls: children.map((name) => ({ name: 'run_agent', arguments: { name, task: `work for ${name}` } })),
          usage: usage[0],
          ...(opts.delayMs !== undefined ? { delayMs: opts.delayMs } : {}),
        };
      }
      return {
        chunks: pieces,
        usage: children.length > 0 ? usage[1] : usage[0],
        chunkDelayMs: opts.chunkDelayMs ?? 1,
        ...(opts.delayMs !== undefined ? { delayMs: opts.delayMs } : {}),
      };
    },
    { modelName: 'stream-model' },
  );
}

export interface DemoTree {
  root: SymfonicAgent;
  collector: MetricsCollector;
}

/** router ─┬─ researcher ── fact_checker;  └─ analyst. Each agent streams its answer. */
export function demoTree(collector = new MetricsCollector({ prices: PRICES }), opts: { chunkDelayMs?: number; delayMs?: number } = {}): DemoTree {
  const factChecker = new SymfonicAgent({
    name: 'fact_checker',
    modelProvider: streamingModel([], ['Figures ', 'are ', 'confirmed.'], [{ inputTokens: 11, outputTokens: 3 }, { inputTokens: 0, outputTokens: 0 }], opts),
    metricsCollector: collector,
  });
  const researcher = new SymfonicAgent({
    name: 'researcher',
    modelProvider: streamingModel(['fact_checker'], ['356k ', 'units ', 'in ', '2023.'], [{ inputTokens: 40, outputTokens: 5 }, { inputTokens: 60, outputTokens: 7 }], opts),
    metricsCollector: collector,
    subAgents: [new SubAgent({ name: 'fact_checker', agent: factChecker, description: 'Checks figures.' })],
  });
  const analyst = new SymfonicAgent({
    name: 'analyst',
    modelProvider: streamingModel([], ['Risks: ', 'policy, ', 'prices.'], [{ inputTokens: 30, outputTokens: 9 }, { inputTokens: 0, outputTokens: 0 }], opts),
    metricsCollector: collector,
  });
  const root = new SymfonicAgent({
    name: 'router',
    modelProvider: streamingModel(['researcher', 'analyst'], ['The ', 'brief: ', 'done.'], [{ inputTokens: 100, outputTokens: 12 }, { inputTokens: 150, outputTokens: 20 }], opts),
    metricsCollector: collector,
    subAgents: [
      new SubAgent({ name: 'researcher', agent: researcher, description: 'Finds figures.' }),
      new SubAgent({ name: 'analyst', agent: analyst, description: 'Ranks risks.' }),
    ],
  });
  return { root, collector };
}

export async function collect(iterable: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const out: RunEvent[] = [];
  for await (const e of iterable) out.push(e);
  return out;
}

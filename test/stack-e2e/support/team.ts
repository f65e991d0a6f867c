/**
 * A two-level team for the end-to-end tests: a coordinator that hands each task to a worker
 * (SubAgentSpec), both on scripted models with fixed usage, so every run's spans and spend are
 * known in advance.
 */
import { MetricsCollector, SubAgentSpec, SymfonicAgent, priceTable, type ModelRequest } from '../../../src/index.js';
import { scriptedModel, type ScriptedTurn } from '../../../src/testing/index.js';

export const COORDINATOR_MODEL = 'e2e-large';
export const WORKER_MODEL = 'e2e-small';
export const PRICES = { [COORDINATOR_MODEL]: { inputPerMTok: 3, outputPerMTok: 15 }, [WORKER_MODEL]: { inputPerMTok: 0.25, outputPerMTok: 1.25 } };
/** Usage of each call: the coordinator's first (delegating) and second (answering) call, the worker's one. */
export const USAGE = { plan: { inputTokens: 100, outputTokens: 20 }, answer: { inputTokens: 150, outputTokens: 10 }, work: { inputTokens: 50, outputTokens: 5 } };
/** Spans one root makes: two invoke_agent, three chat, one execute_tool run_agent. */
export const SPANS_PER_ROOT = 6;

const taskOf = (req: ModelRequest) => req.messages.find((m) => m.role === 'user')?.content ?? '';
const hasToolResults = (req: ModelRequest) => req.messages.some((m) => m.role === 'tool');

export interface TeamOptions {
  collector?: MetricsCollector;
  /** Milliseconds the worker's model takes; default none. */
  workMs?: (task: string) => number;
  /** Tasks whose worker model call throws (the delegation ends child_error, the root still answers). */
  failWork?: (task: string) => boolean;
}

export function newCollector(): MetricsCollector {
  return new MetricsCollector({ prices: priceTable(PRICES) });
}

export function team(options: TeamOptions = {}): SymfonicAgent {
  const coordinator = scriptedModel(
    (req): ScriptedTurn =>
      hasToolResults(req)
        ? { text: `done: ${taskOf(req)}`, usage: USAGE.answer }
        : { toolCalls: [{ name: 'run_agent', arguments: { name: 'worker', task: taskOf(req) } }], usage: USAGE.plan },
    { modelName: COORDINATOR_MODEL },
  );
  const worker = scriptedModel(
    (req): ScriptedTurn => {
      const task = taskOf(req);
      if (options.failWork?.(task)) return new Error(`the worker model failed on "${task}"`);
      const delayMs = options.workMs?.(task);
      return { text: `worked on ${task}`, usage: USAGE.work, ...(delayMs ? { delayMs } : {}) };
    },
    { modelName: WORKER_MODEL },
  );
  return new SymfonicAgent({
    name: 'coordinator',
    modelProvider: coordinator,
    subAgents: [new SubAgentSpec({ name: 'worker', description: 'Does one task.', modelProvider: worker })],
    ...(options.collector ? { metricsCollector: options.collector } : {}),
  });
}

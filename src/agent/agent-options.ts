import { z } from 'zod';
import { isAccounting, type Accounting } from '../accounting/accounting.js';
import { checked } from '../core/options.js';
import type { ModelProvider } from '../model/types.js';
import { isLogger, type Logger } from '../observability/logger.js';
import type { Capability } from '../tool/capability.js';
import { isTool, NAME_PATTERN, type Tool } from '../tool/define-tool.js';
import { snapshotOptionParts } from '../run/snapshot/snapshot-policy.js';
import { FrameworkConfig } from './framework-config.js';
import type { SessionStore } from '../session/session-store.js';
import type { CompactHistory } from '../session/session-memory.js';

const isProvider = (p: unknown): boolean => {
  const m = p as Partial<ModelProvider> | null;
  return typeof m === 'object' && m !== null && typeof m.generate === 'function' && typeof m.providerName === 'string' && typeof m.modelName === 'string';
};

/** The options both agent classes take, each checked with the fix named. */
const parts = {
  name: checked<string>((n) => typeof n === 'string' && NAME_PATTERN.test(n), (n) => `agent name ${JSON.stringify(n)} is not allowed: use 1–64 letters, digits, "_" or "-".`),
  modelProvider: checked<ModelProvider>(
    isProvider,
    'modelProvider must be a ModelProvider ({ providerName, modelName, generate() }), e.g. openAICompatible({ baseURL, model }) or scriptedModel([...]) from symfonic/testing.',
  ),
  instructions: checked<string>((v) => typeof v === 'string', 'instructions must be a string.').optional(),
  tools: checked<readonly Tool[]>((t) => Array.isArray(t) && t.every(isTool), 'tools must be an array of tools made by defineTool.').optional(),
  // Its shape and its tool name are checked once the agent's tools are known (assembleCore).
  toolChoice: z.unknown().optional(),
  capabilities: checked<readonly Capability[]>(
    (cs) => Array.isArray(cs) && cs.every((c: Partial<Capability> | null) => typeof c?.name === 'string' && typeof c.contribute === 'function'),
    'capabilities must be an array, each with a name and a contribute() method.',
  ).optional(),
  // How snapshots of suspended trees are written and which resume (src/snapshot/snapshot-policy.ts).
  ...snapshotOptionParts,
};

/** The facade's options: a model, instructions, tools and how its snapshots are kept; no scope, no depth, by design. */
export const facadeOptionsSchema = z.object(parts).strict();

const isSessionStore = (s: unknown): boolean => {
  const o = s as Partial<SessionStore> | null;
  return typeof o === 'object' && o !== null && ['load', 'append', 'turns', 'clear'].every((m) => typeof (o as Record<string, unknown>)[m] === 'function');
};

/** How much of a session a turn reads: the last maxMessages, then compact's. */
const historySchema = z
  .object({
    maxMessages: z.int('history.maxMessages must be a whole number').positive('history.maxMessages must be at least 1').max(10_000, 'history.maxMessages must be at most 10,000').optional(),
    compact: checked<CompactHistory>((f) => typeof f === 'function', 'history.compact must be a function (messages, ctx) => messages (or a promise of them).').optional(),
  })
  .strict();

/** SymfonicAgent's options. */
export const agentOptionsSchema = z
  .object({
    ...parts,
    description: checked<string>((v) => typeof v === 'string', 'description must be a string.').optional(),
    subAgents: checked<readonly unknown[]>((v) => Array.isArray(v), 'subAgents must be an array of SubAgent or SubAgentSpec.').optional(),
    config: checked<FrameworkConfig>((c) => c instanceof FrameworkConfig, 'config must be a FrameworkConfig: new FrameworkConfig({ agent: { maxTurns: 5 } }).').optional(),
    metricsCollector: checked<Accounting>(isAccounting, 'metricsCollector must be a MetricsCollector (or another Accounting: { id, open(frame, agentName) }).').optional(),
    logger: checked<Logger>(isLogger, "logger must be a pino logger (or any object with pino's child, isLevelEnabled, error, warn, info, debug).").optional(),
    sessions: checked<SessionStore>(isSessionStore, 'sessions must be a SessionStore ({ load, append, turns, clear }), e.g. new InMemorySessionStore() or new RedisSessionStore({ url }).').optional(),
    history: historySchema.optional(),
    sessionTimeoutMs: z.int('sessionTimeoutMs must be a whole number of milliseconds').positive('sessionTimeoutMs must be above 0').optional(),
  })
  .strict();

/** The parts every agent is assembled from, validated. */
export type AgentParts = z.output<typeof agentOptionsSchema>;

/** Old names, refused with the one name for the model everywhere. */
export const RENAMED = { model: 'modelProvider', provider: 'modelProvider' };

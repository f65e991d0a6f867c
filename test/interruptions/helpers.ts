/**
 * The trees the interruption tests pause and resume. Each builder makes fresh agents every call,
 * so a test can resume a snapshot on agents of the same names and roster that never saw the run
 * (what another process holds), and every model bills a fixed usage per call, so the ledger can
 * be checked against the calls counted at the models.
 */
import { z } from 'zod';
import {
  FrameworkConfig,
  MetricsCollector,
  SubAgent,
  SymfonicAgent,
  defineTool,
  priceTable,
  type AgentResponse,
  type Decision,
  type EncryptedSnapshot,
  type Interruption,
  type RunSnapshot,
  type ModelRequest,
  type NeedsApproval,
  type Usage,
} from '../../src/index.js';
import { scriptedModel, type ScriptedModel, type ScriptedTurn } from '../../src/testing/index.js';

/** What each agent's model reports per call: different per agent, so a sum names who was charged. */
export const BILL = {
  boss: { inputTokens: 100, outputTokens: 10 },
  manager: { inputTokens: 200, outputTokens: 20 },
  clerk: { inputTokens: 300, outputTokens: 30 },
} as const;

/** Prices per model, so cost is known and summable: $1 per million input tokens, $2 per million output. */
export const PRICES = priceTable({
  'boss-model': { inputPerMTok: 1, outputPerMTok: 2 },
  'manager-model': { inputPerMTok: 1, outputPerMTok: 2 },
  'clerk-model': { inputPerMTok: 1, outputPerMTok: 2 },
});

export const costOf = (u: { inputTokens: number; outputTokens: number }): number => (u.inputTokens * 1 + u.outputTokens * 2) / 1_000_000;

/** Tool results the request carries, in order. */
export const toolResults = (req: ModelRequest): string[] => req.messages.filter((m) => m.role === 'tool').map((m) => m.content);

type Call = { name: string; arguments: unknown };
/** A run's first-turn calls: fixed, or chosen from the run's task. */
type Calls = Call[] | ((task: string) => Call[]);

/**
 * A model that makes `calls` on a run's first turn and, once it reads their results, answers with
 * `answer(results)`; every call reports `bill`. Keyed on the conversation, not the call index, so
 * a model serves a run however often it is resumed.
 */
export function billedModel(modelName: string, bill: { inputTokens: number; outputTokens: number }, calls: Calls, answer: (results: string[]) => string): ScriptedModel {
  return scriptedModel(
    (req): ScriptedTurn => {
      const results = toolResults(req);
      const planned = typeof calls === 'function' ? calls(req.messages[0]?.content ?? '') : calls;
      if (results.length === 0 && planned.length > 0) return { toolCalls: planned, usage: bill };
      return { text: answer(results), usage: bill };
    },
    { modelName },
  );
}

export const runAgent = (name: string, task: string): Call => ({ name: 'run_agent', arguments: { name, task } });

/** Reported usage of every call a model received, summed: what the ledger must hold for it. */
export function billed(model: ScriptedModel, bill: { inputTokens: number; outputTokens: number }): { inputTokens: number; outputTokens: number } {
  return { inputTokens: model.calls.length * bill.inputTokens, outputTokens: model.calls.length * bill.outputTokens };
}

export const tokens = (u: Usage | { inputTokens: number; outputTokens: number }) => ({ inputTokens: u.inputTokens, outputTokens: u.outputTokens });

export function sum(...list: { inputTokens: number; outputTokens: number }[]): { inputTokens: number; outputTokens: number } {
  return list.reduce((a, b) => ({ inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens }), { inputTokens: 0, outputTokens: 0 });
}

export interface PayTreeOptions {
  collector?: MetricsCollector;
  snapshotKey?: string;
  needsApproval?: NeedsApproval<{ amount: number }>;
  /** The clerk's first-turn calls (default: one pay call of 42). */
  clerkCalls?: Calls;
  /** The manager's first-turn calls (default: one delegation to the clerk). */
  managerCalls?: Calls;
  /** The pay tool waits for this before it pays. */
  payGate?: Promise<void>;
  bossConfig?: FrameworkConfig;
  managerConfig?: FrameworkConfig;
  clerkConfig?: FrameworkConfig;
}

/**
 * boss → manager → clerk, the clerk holding `pay` (needs approval) and `lookup` (does not). Each
 * answers with what it read, so the answer that reaches the root shows the whole path.
 */
export function payTree(options: PayTreeOptions = {}) {
  const paid: number[] = [];
  const looked: string[] = [];
  const pay = defineTool({
    name: 'pay',
    description: 'Pays an amount.',
    input: z.object({ amount: z.number() }),
    needsApproval: options.needsApproval ?? true,
    execute: async ({ amount }) => {
      await options.payGate;
      paid.push(amount);
      return `paid ${amount}`;
    },
  });
  const lookup = defineTool({
    name: 'lookup',
    description: 'Looks an account up.',
    input: z.object({ account: z.string() }),
    execute: ({ account }) => {
      looked.push(account);
      return `account ${account} is open`;
    },
  });
  const shared = {
    ...(options.collector !== undefined ? { metricsCollector: options.collector } : {}),
  };
  const clerkModel = billedModel('clerk-model', BILL.clerk, options.clerkCalls ?? [{ name: 'pay', arguments: { amount: 42 } }], (r) => `clerk: ${r.join(' + ')}`);
  const clerk = new SymfonicAgent({ name: 'clerk', modelProvider: clerkModel, tools: [pay, lookup], ...shared, ...(options.clerkConfig ? { config: options.clerkConfig } : {}) });
  const managerModel = billedModel('manager-model', BILL.manager, options.managerCalls ?? [runAgent('clerk', 'pay 42')], (r) => `manager: ${r.join(' + ')}`);
  const manager = new SymfonicAgent({
    name: 'manager',
    modelProvider: managerModel,
    subAgents: [new SubAgent({ name: 'clerk', agent: clerk, description: 'Pays bills.' })],
    ...shared,
    ...(options.managerConfig ? { config: options.managerConfig } : {}),
  });
  const bossModel = billedModel('boss-model', BILL.boss, [runAgent('manager', 'get the bill paid')], (r) => `boss: ${r.join(' + ')}`);
  const boss = new SymfonicAgent({
    name: 'boss',
    modelProvider: bossModel,
    subAgents: [new SubAgent({ name: 'manager', agent: manager, description: 'Gets things done.' })],
    ...shared,
    // Without a key the tree opts in to unsigned snapshots, as an application must say it does.
    ...(options.snapshotKey !== undefined ? { snapshotKey: options.snapshotKey } : { unsignedSnapshots: true }),
    ...(options.bossConfig ? { config: options.bossConfig } : {}),
  });
  return { boss, manager, clerk, models: { boss: bossModel, manager: managerModel, clerk: clerkModel }, paid, looked };
}

export type PayTree = ReturnType<typeof payTree>;

/** Every model call the tree's models received. */
export const modelCalls = (t: PayTree): number => t.models.boss.calls.length + t.models.manager.calls.length + t.models.clerk.calls.length;

/** One decision for every interruption of a suspended response. */
export function decideAll(r: AgentResponse, decision: Decision): Record<string, Decision> {
  return Object.fromEntries(r.interruptions.map((i) => [i.id, approving(i, decision)]));
}

/** An approval bound to the input the interruption showed (its inputDigest), as an application passes it back; any other decision as it is. */
export function approving(i: Interruption, decision: Decision = { approve: true }): Decision {
  return 'approve' in decision && decision.approve && i.inputDigest !== undefined ? { approve: true, inputDigest: i.inputDigest } : decision;
}

/** The plain snapshot of a response whose agents encrypt nothing: what the tests read and edit. */
export function plain(snapshot: RunSnapshot | EncryptedSnapshot | null): RunSnapshot {
  if (snapshot === null || !('run' in snapshot)) throw new Error('expected a plain (unencrypted) snapshot');
  return snapshot;
}

export const scope = { tenantId: 'acme', userId: 'u-1' } as const;

export const askConfig = () => new FrameworkConfig({ agent: { askUserEnabled: true } });

/** Two snapshot keys (at least 16 characters, as the agent requires). */
export const KEY_A = 'key-a-0123456789abcdef';
export const KEY_B = 'key-b-0123456789abcdef';

import type { Context } from '@opentelemetry/api';
import { ConfigurationError } from '../core/errors.js';
import { makeScope, type Scope } from '../core/scope.js';
import type { Message } from '../model/types.js';
import type { MetricsCollector } from '../observability/metrics-collector.js';

export interface RunOptions {
  scope?: Scope;
  runId?: string;
  rootRunId?: string;
  parentRunId?: string;
  agentDepth?: number;
  signal?: AbortSignal;
  /** The trace context to start this run's span in; defaults to the active context. */
  parentContext?: Context;
  /**
   * A collector to account in when the agent was built without one. The roster passes the
   * delegator's, so a child made without a collector still rolls up into its parent's tree.
   */
  metricsCollector?: MetricsCollector;
  /**
   * The depth ceiling inherited from the tree above: this run's delegations obey the tighter of
   * it and the agent's own maxAgentDepth. The roster passes the delegator's.
   */
  maxAgentDepth?: number;
}

/** What the loop itself needs beyond RunOptions: set by the facade and by delegation adapters. */
export interface RunExtras {
  history?: readonly Message[];
  instructions?: string;
}

export interface ResolvedRun {
  scope: Scope | undefined;
  runId: string | undefined;
  rootRunId: string | undefined;
  parentRunId: string | null;
  agentDepth: number;
  signal: AbortSignal | undefined;
  parentContext: Context | undefined;
  fallbackCollector: MetricsCollector | undefined;
  maxAgentDepth: number | undefined;
}

const ID = /^[A-Za-z0-9_.:-]{1,128}$/;

function checkId(field: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !ID.test(value)) {
    throw new ConfigurationError(`run option ${field} must be an id of 1–128 letters, digits, "_", ".", ":" or "-" (got ${JSON.stringify(value)}); omit it and one is minted.`);
  }
  return value;
}

/** Validates run options once, at the door, so the loop reads only known-good values. */
export function resolveRunOptions(options: RunOptions | undefined): ResolvedRun {
  if (options === undefined) {
    return { scope: undefined, runId: undefined, rootRunId: undefined, parentRunId: null, agentDepth: 0, signal: undefined, parentContext: undefined, fallbackCollector: undefined, maxAgentDepth: undefined };
  }
  if (typeof options !== 'object' || options === null) throw new ConfigurationError('run options must be an object: agent.run(query, { scope, signal, ... }).');
  const runId = checkId('runId', options.runId);
  const rootRunId = checkId('rootRunId', options.rootRunId);
  const parentRunId = checkId('parentRunId', options.parentRunId) ?? null;
  if (parentRunId !== null && runId === parentRunId) {
    throw new ConfigurationError(`runId and parentRunId are both "${runId}": a run never runs under its parent's id. Omit runId and a fresh one is minted.`);
  }
  if (parentRunId === null && rootRunId !== undefined && rootRunId !== runId) {
    throw new ConfigurationError(
      `rootRunId "${rootRunId}" was given for a root run (no parentRunId): a root's rootRunId is its own runId. ` +
        `Pass parentRunId as well for a child run, or drop rootRunId.`,
    );
  }
  if (parentRunId !== null && rootRunId === undefined) {
    throw new ConfigurationError('parentRunId was given without rootRunId: a child run needs both to place itself in its tree.');
  }
  const agentDepth = options.agentDepth ?? (parentRunId === null ? 0 : 1);
  if (!Number.isInteger(agentDepth) || agentDepth < 0) {
    throw new ConfigurationError(`agentDepth must be a whole number ≥ 0 (got ${String(options.agentDepth)}).`);
  }
  if (options.maxAgentDepth !== undefined && (!Number.isInteger(options.maxAgentDepth) || options.maxAgentDepth < 0)) {
    throw new ConfigurationError(`maxAgentDepth must be a whole number ≥ 0 (got ${String(options.maxAgentDepth)}).`);
  }
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw new ConfigurationError('signal must be an AbortSignal, e.g. AbortSignal.timeout(30_000).');
  }
  return {
    scope: options.scope === undefined ? undefined : makeScope(options.scope),
    runId,
    rootRunId,
    parentRunId,
    agentDepth,
    signal: options.signal,
    parentContext: options.parentContext,
    fallbackCollector: options.metricsCollector,
    maxAgentDepth: options.maxAgentDepth,
  };
}

import { z } from 'zod';
import type { MetricsCollector } from '../accounting/metrics-collector.js';
import { ConfigurationError } from '../core/errors.js';
import { ID_PATTERN, ID_RULE, sameIdProblem } from '../run/ids.js';
import type { RunLineage } from '../run/run-driver.js';
import type { Scope } from '../core/scope.js';
import { isLogger, type Logger } from '../observability/logger.js';
import type { DurableAgent } from './agent-registry.js';

/** A queue durable work waits on, with its concurrency limits. */
export interface DurableQueueOptions {
  /** Most workflows of this queue running at once across every worker. */
  globalConcurrency?: number;
  /** Most running at once in one worker. */
  workerConcurrency?: number;
  /** How often a worker looks for work on it, in ms. Default 200. */
  pollingIntervalMs?: number;
}

export interface DurableOptions {
  /** The PostgreSQL database DBOS keeps the trees in, e.g. postgresql://user:password@127.0.0.1:5432/symfonic. */
  systemDatabaseUrl: string;
  /** The agents this worker runs trees of, found by name: every worker of a deployment registers the same. */
  agents: readonly DurableAgent[];
  /** This worker's stable name (its slot in the deployment): started again under it, it finishes the trees it left unfinished. Default 'symfonic-worker'. */
  executorId?: string;
  /** Names the application in the database (its workflows and queues). Default 'symfonic'. */
  applicationName?: string;
  /** Queues by name: roots enqueued with `enqueue`, children with `childQueue`, wait there for a worker. */
  queues?: Record<string, DurableQueueOptions>;
  /** A queue of `queues` every delegation's child goes on, for any listening worker to run; default: the child runs in its delegator's worker. */
  childQueue?: string;
  /** The queues this worker takes work from; default every queue of `queues`; [] for a worker that only starts and enqueues. */
  listenQueues?: string[];
  /** How long a step's record may take to land before the tree's caller is told PostgreSQL is unreachable, in ms. Default 10000. */
  checkpointTimeoutMs?: number;
  /** The ledger of runs whose agent has no metricsCollector of its own; default one of the worker's. */
  metricsCollector?: MetricsCollector;
  /** Where the worker and DBOS log; silent by default. */
  logger?: Logger;
}

export interface DurableRunOptions {
  /** The tenant the tree acts and spends for. */
  scope?: Scope;
  /** The root's run id, which names the tree's workflow; a fresh one when absent. Starting again under a recorded id answers that tree. */
  runId?: string;
  /** Epoch ms by which the tree must be over. */
  deadline?: number;
  /**
   * Places the tree's root under a caller's run (a served task of a caller's tree, say): its
   * root_run_id and parent_run_id the caller's, its depth (the caller's plus one) and ceiling.
   * Recorded with the tree, so a worker that recovers it places it the same. Absent: the tree is
   * a root of its own. Either way `runId` names the tree (result, resume, recover take it).
   */
  lineage?: RunLineage;
}

export interface DurableEnqueueOptions extends DurableRunOptions {
  /** The queue of `queues` the tree waits on for a worker. */
  queue: string;
}

const queueSchema = z
  .object({
    globalConcurrency: z.number().int().min(1).optional(),
    workerConcurrency: z.number().int().min(1).optional(),
    pollingIntervalMs: z.number().int().min(10).max(60_000).optional(),
  })
  .strict();

const optionsSchema = z
  .object({
    systemDatabaseUrl: z.string().regex(/^postgres(ql)?:\/\/[^/]/, 'a PostgreSQL URL starts with postgresql:// (or postgres://) and names a host'),
    agents: z.array(z.unknown()).min(1, 'at least one agent: a worker runs trees of the agents it registers'),
    executorId: z.string().regex(ID_PATTERN, `must be ${ID_RULE}`).optional(),
    applicationName: z.string().regex(ID_PATTERN, `must be ${ID_RULE}`).optional(),
    queues: z.record(z.string().regex(ID_PATTERN, `a queue name must be ${ID_RULE}`), queueSchema).optional(),
    childQueue: z.string().optional(),
    listenQueues: z.array(z.string()).optional(),
    checkpointTimeoutMs: z.number().int().min(100).max(3_600_000).optional(),
    metricsCollector: z.custom<MetricsCollector>((c) => typeof (c as { open?: unknown } | null)?.open === 'function', 'metricsCollector must be a MetricsCollector').optional(),
    logger: z.custom<Logger>(isLogger, 'logger must be a pino-style logger (child, isLevelEnabled, error, warn, info, debug)').optional(),
  })
  .strict();

const EXAMPLE = "Example: startDurable({ systemDatabaseUrl: 'postgresql://symfonic@127.0.0.1:5432/symfonic', agents: [planner], executorId: 'worker-1' }).";

/** Validates the options once, with the example a person fixing them needs. */
export function readDurableOptions(options: DurableOptions): DurableOptions {
  if (typeof options !== 'object' || options === null) throw new ConfigurationError(`startDurable needs options. ${EXAMPLE}`);
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) throw new ConfigurationError(`invalid startDurable options: ${z.prettifyError(parsed.error)}. ${EXAMPLE}`);
  const queues = Object.keys(options.queues ?? {});
  for (const name of [...(options.childQueue === undefined ? [] : [options.childQueue]), ...(options.listenQueues ?? [])]) {
    if (!queues.includes(name)) throw new ConfigurationError(`startDurable: queue "${name}" is not one of queues (${queues.map((q) => `"${q}"`).join(', ') || 'none'}). Declare it: queues: { "${name}": { workerConcurrency: 4 } }.`);
  }
  return options;
}

const lineageSchema = z
  .object({
    rootRunId: z.string().regex(ID_PATTERN, `must be ${ID_RULE}`),
    parentRunId: z.string().regex(ID_PATTERN, `must be ${ID_RULE}`),
    // No upper bound beyond the integer: a run placed in process takes any depth, and a served one
    // the wire's deepest caller plus one; the ceiling (maxDepth, or the agent's) refuses delegations.
    depth: z.number().int().min(1, 'a run placed under a caller is at least one deeper than its root (depth 1)'),
    maxDepth: z.number().int().min(0).optional(),
  })
  .strict();

const runSchema = z
  .object({
    scope: z.unknown().optional(),
    runId: z.string().regex(ID_PATTERN, `must be ${ID_RULE}`).optional(),
    deadline: z.number().int().positive().optional(),
    lineage: lineageSchema.optional(),
  })
  .strict();

const LINEAGE_EXAMPLE = "Example: durable.run('planner', task, { scope: { tenantId: 'acme' }, runId, lineage: { rootRunId: callerRootRunId, parentRunId: callerRunId, depth: callerDepth + 1 } }).";
const RUN_EXAMPLE = "Example: durable.run('planner', task, { scope: { tenantId: 'acme' }, runId: 'order-17' }).";

/** The example for an error: the lineage one only where the lineage is what is wrong. */
function exampleFor(error: z.ZodError): string {
  return error.issues.some((issue) => issue.path[0] === 'lineage') ? LINEAGE_EXAMPLE : RUN_EXAMPLE;
}

/** Validates a run's options (an enqueue's too, given the queues it may name). */
export function readRunOptions(what: string, options: unknown, queues?: readonly string[]): DurableEnqueueOptions | DurableRunOptions {
  if (options === undefined && queues === undefined) return {};
  if (typeof options !== 'object' || options === null) throw new ConfigurationError(`durable ${what}: options must be an object ({ scope?, runId?, deadline?, lineage?${queues ? ', queue' : ''} }).`);
  const schema = queues === undefined ? runSchema : runSchema.extend({ queue: z.string() });
  const parsed = schema.safeParse(options);
  if (!parsed.success) throw new ConfigurationError(`invalid durable ${what} options: ${z.prettifyError(parsed.error)}. ${exampleFor(parsed.error)}`);
  const o = options as DurableRunOptions;
  const same = sameIdProblem(o.runId, o.lineage?.parentRunId, 'runId and lineage.parentRunId');
  if (same !== undefined) throw new ConfigurationError(`durable ${what}: ${same}: give the tree's root a run id of its own (or none). ${LINEAGE_EXAMPLE}`);
  const queue = (options as { queue?: string }).queue;
  if (queues !== undefined && !queues.includes(queue!)) throw new ConfigurationError(`durable enqueue: queue "${queue}" is not one of this worker's queues (${queues.map((q) => `"${q}"`).join(', ') || 'none'}).`);
  return options as DurableRunOptions;
}

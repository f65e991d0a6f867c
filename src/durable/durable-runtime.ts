import { context as otelContext } from '@opentelemetry/api';
import { MetricsCollector } from '../accounting/metrics-collector.js';
import type { Accounting } from '../accounting/accounting.js';
import type { AgentResponse } from '../agent/agent-response.js';
import { ConfigurationError } from '../core/errors.js';
import { newRunId } from '../run/ids.js';
import type { Decisions } from '../run/interruption.js';
import { silentLogger, type Logger } from '../observability/logger.js';
import type { ChildStep, StepSpan } from '../run/run-driver.js';
import type { SpanLink } from '../run/snapshot/run-snapshot.js';
import { AgentRegistry, type DurableAgent } from './agent-registry.js';
import { treeOf, type CheckpointWatch, type ChildInput, type StepEngine } from './dbos-driver.js';
import { loadDbos, type Dbos, type DbosClient, type DbosSdk, type WorkflowHandle } from './dbos-sdk.js';
import { readDurableOptions, readRunOptions, type DurableEnqueueOptions, type DurableOptions, type DurableRunOptions } from './durable-options.js';
import { launchAlone, launchOnce } from './dbos-launch.js';
import { StepWatch } from './step-watch.js';
import { dbosLogger, launchError, maskedAddress, stallError } from './engine-faults.js';
import { ExecutorLease } from './executor-lease.js';
import { spanLinkOf } from './recorded-frame.js';
import { childWorkflowId, CHILD_WORKFLOW, readOutput, recordedStart, rootWorkflowId, ROOT_WORKFLOW } from './tree-records.js';
import { resumeTree } from './tree-resume.js';
import { rootFrameData } from './root-frame.js';
import { systemDatabaseUrl } from './system-database-url.js';
import { recoverTree, type TakeoverHost } from './tree-takeover.js';
import { cancelledTree, cancelTree, LocalRuns, type CancelHost } from './tree-cancel.js';
import { runChild, runRoot, type RootInput, type TreeHost, type TreeOutput } from './tree-runs.js';

/** A worker of durable trees: see startDurable. */
export interface Durable {
  /** Declares this a durable runtime: what serveAgent(durable, { tasks }) tells it from an agent by. */
  readonly kind: 'symfonic/durable';
  /** The agents this worker runs trees of, by name. */
  readonly agents: ReadonlyMap<string, DurableAgent>;
  /** This worker's name: started again under it, it finishes the trees it left unfinished. */
  readonly executorId: string;
  /** The version of the agents it runs (their tree shapes): it runs and recovers only trees recorded by the same. */
  readonly version: string;
  /** Runs a durable tree in this worker and answers as agent.run does (a failed tree rejects with a DurableRunError). */
  run<T = unknown>(agent: string, task: string, options?: DurableRunOptions): Promise<AgentResponse<T>>;
  /** Puts a tree on a queue for any listening worker; answers its root run id at once. */
  enqueue(agent: string, task: string, options: DurableEnqueueOptions): Promise<string>;
  /** The answer of the tree with this root run id, waiting for it: its latest run's (a resume's, once resumed). */
  result<T = unknown>(rootRunId: string): Promise<AgentResponse<T>>;
  /** Goes on with a suspended tree, by its root run id, from any worker: once; a second resume of the same suspension is refused. */
  resume<T = unknown>(rootRunId: string, options: { decisions: Decisions }): Promise<AgentResponse<T>>;
  /**
   * Takes over the unfinished parts of a tree whose workers are gone (another executor id's): a
   * part a live worker runs stays with it, and a tree another worker is recovering is left to it.
   * Refused, saying what changed, when this worker's agents differ.
   */
  recover(rootRunId: string): Promise<void>;
  /**
   * Cancels the tree with this root run id, wherever its workflows run: none of its unfinished
   * runs records an output or is recovered after this; its runs in this worker stop at once (an
   * in-flight call aborted, what it spent settled) and have ended when this answers; a worker
   * elsewhere stops its part at its next step. A caller waiting on the tree's answer is rejected
   * with a DurableRunError named AbortError. A finished tree is left as it is.
   */
  cancel(rootRunId: string): Promise<void>;
  /** Stops taking and recording work; trees under way stay recorded, for this executor id to finish. */
  shutdown(): Promise<void>;
}

let running: DurableRuntime | undefined;

/**
 * Starts this process's durable worker: DBOS Transact on PostgreSQL, the tree workflows
 * registered, the agents found by name, and the trees this executor id left unfinished taken up
 * again. One per process (DBOS is one per process).
 */
export async function startDurable(options: DurableOptions): Promise<Durable> {
  const o = readDurableOptions(options);
  if (running !== undefined) throw new ConfigurationError('a durable worker already runs in this process (DBOS is one per process): use it, or shut it down first.');
  const registry = new AgentRegistry(o.agents);
  const sdk = await loadDbos();
  if (running !== undefined) throw new ConfigurationError('a durable worker already runs in this process (DBOS is one per process): use it, or shut it down first.');
  const runtime = new DurableRuntime(o, registry, sdk);
  running = runtime;
  try {
    await runtime.launch();
  } catch (error) {
    running = undefined;
    throw error;
  }
  return runtime;
}

class DurableRuntime implements Durable, TreeHost, StepEngine, TakeoverHost, CancelHost {
  readonly kind = 'symfonic/durable' as const;
  readonly agents: ReadonlyMap<string, DurableAgent>;
  readonly executorId: string;
  readonly version: string;
  readonly accounting: Accounting;
  readonly dbos: Dbos;
  /** The steps' engine is the worker itself: DBOS, the child workflow, the checkpoint watch. */
  readonly engine: StepEngine = this;
  readonly logger: Logger;
  /** The system database's address, password masked: what every fault names. */
  readonly address: string;
  private readonly rootWorkflow: (input: RootInput) => Promise<TreeOutput>;
  private readonly childWorkflow: (input: ChildInput) => Promise<ChildStep>;
  private client: Promise<DbosClient> | undefined;
  /** Callers waiting on a tree here, told when a step of it cannot be recorded. */
  private readonly waiters = new Map<string, Set<(error: Error) => void>>();
  /** Root workflows this worker started fresh: their span starts where the caller's is, nothing recorded to look up. */
  private readonly startedHere = new Set<string>();
  /** This worker's runs of each tree: what a cancel stops here. */
  readonly runs = new LocalRuns();
  /** This worker's executor lock, held while it lives (taken at launch): see ExecutorLease. */
  lease!: ExecutorLease;

  constructor(
    private readonly options: DurableOptions,
    readonly registry: AgentRegistry,
    private readonly sdk: DbosSdk,
  ) {
    this.executorId = options.executorId ?? 'symfonic-worker';
    this.version = registry.version;
    this.agents = registry.byName;
    this.logger = (options.logger ?? silentLogger).child({ component: 'symfonic/durable', executor_id: this.executorId });
    this.address = maskedAddress(options.systemDatabaseUrl);
    this.accounting = options.metricsCollector ?? new MetricsCollector();
    this.dbos = sdk.DBOS;
    // Registered before launch, as DBOS requires; the agent is found by name when one runs.
    this.rootWorkflow = this.dbos.registerWorkflow((input: RootInput) => runRoot(this, input, this.dbos.workflowID!), { name: ROOT_WORKFLOW });
    this.childWorkflow = this.dbos.registerWorkflow((input: ChildInput) => runChild(this, input), { name: CHILD_WORKFLOW });
  }

  async launch(): Promise<void> {
    const o = this.options;
    const queues = Object.keys(o.queues ?? {});
    this.dbos.setConfig({
      name: o.applicationName ?? 'symfonic',
      systemDatabaseUrl: systemDatabaseUrl(o.systemDatabaseUrl),
      executorID: this.executorId,
      applicationVersion: this.version,
      // Our spans are the trace; DBOS's would sit between them and register globals of their own.
      tracingEnabled: false,
      enableOTLP: false,
      logger: dbosLogger(this.logger),
      listenQueues: o.listenQueues ?? queues,
    });
    // Before DBOS launches: its launch runs the unfinished trees of this id, a live twin's too.
    try {
      this.lease = await ExecutorLease.take(o.systemDatabaseUrl, o.applicationName ?? 'symfonic', this.executorId, this.logger, this.address);
    } catch (error) {
      throw launchError(this.address, o.systemDatabaseUrl, error);
    }
    try {
      await launchAlone(o.systemDatabaseUrl, this.address, async () => {
        await launchOnce(this.dbos, this.logger);
        for (const [name, q] of Object.entries(o.queues ?? {})) {
          await this.dbos.registerQueue(name, { globalConcurrency: q.globalConcurrency, workerConcurrency: q.workerConcurrency, minPollingIntervalMs: q.pollingIntervalMs ?? 200, onConflict: 'always_update' });
        }
      });
    } catch (error) {
      await this.dbos.shutdown().catch(() => undefined);
      await this.lease.close();
      throw launchError(this.address, o.systemDatabaseUrl, error);
    }
    await this.warnOfOtherVersions();
  }

  async run<T>(agent: string, task: string, options?: DurableRunOptions): Promise<AgentResponse<T>> {
    const { rootRunId, handle } = await this.start(agent, task, readRunOptions('run', options), undefined);
    return readOutput(rootRunId, await this.whileRecorded(rootRunId, handle.getResult({ pollingIntervalMs: 100 }))) as AgentResponse<T>;
  }

  async enqueue(agent: string, task: string, options: DurableEnqueueOptions): Promise<string> {
    const o = readRunOptions('enqueue', options, Object.keys(this.options.queues ?? {})) as DurableEnqueueOptions;
    return (await this.start(agent, task, o, o.queue)).rootRunId;
  }

  async result<T>(rootRunId: string): Promise<AgentResponse<T>> {
    const latest = await this.latestRun(rootRunId);
    const output = await this.whileRecorded(rootRunId, this.dbos.retrieveWorkflow<TreeOutput>(latest).getResult({ pollingIntervalMs: 100 }));
    return readOutput(rootRunId, output) as AgentResponse<T>;
  }

  async resume<T>(rootRunId: string, options: { decisions: Decisions }): Promise<AgentResponse<T>> {
    const handle = await resumeTree(this, rootRunId, options);
    return readOutput(rootRunId, await this.whileRecorded(rootRunId, handle.getResult({ pollingIntervalMs: 100 }))) as AgentResponse<T>;
  }

  cancel(rootRunId: string): Promise<void> {
    return cancelTree(this, rootRunId).catch((error: unknown) => Promise.reject(launchError(this.address, this.options.systemDatabaseUrl, error, false)));
  }

  recover(rootRunId: string): Promise<void> {
    return recoverTree(this, rootRunId).catch((error: unknown) => {
      throw launchError(this.address, this.options.systemDatabaseUrl, error, false);
    });
  }

  async shutdown(): Promise<void> {
    if (running !== this) return;
    running = undefined;
    const client = this.client;
    this.client = undefined;
    await Promise.all([this.dbos.shutdown(), client?.then((c) => c.destroy(), () => undefined)]);
    // Last: until DBOS stopped, this worker's trees were its own.
    await this.lease?.close();
  }

  /** Starts a tree's root workflow (on a queue, or here); an id already recorded with the same start answers that tree. */
  async start(agent: string, task: string, options: DurableRunOptions, queue: string | undefined): Promise<{ rootRunId: string; handle: WorkflowHandle<TreeOutput> }> {
    if (typeof task !== 'string') throw new ConfigurationError(`durable run of "${agent}": the task must be a string.`);
    const { shape } = this.registry.root(agent);
    const runId = options.runId ?? newRunId();
    const input: RootInput = { agent, task, frame: rootFrameData(runId, options), parentSpan: spanLinkOf(otelContext.active()), shape, generation: 0 };
    const id = rootWorkflowId(runId, 0);
    if (queue === undefined) this.startedHere.add(id);
    try {
      return { rootRunId: runId, handle: await recordedStart(this.dbos, id, input, () => this.startRoot(id, input, queue)) };
    } catch (error) {
      this.startedHere.delete(id);
      throw launchError(this.address, this.options.systemDatabaseUrl, error, false);
    }
  }

  startRoot(workflowID: string, input: RootInput, queueName: string | undefined): Promise<WorkflowHandle<TreeOutput>> {
    return this.dbos.startWorkflow(this.rootWorkflow, { workflowID, queueName, workflowIDReusePolicy: 'reject', workflowAttributes: { rootRunId: input.frame.runId } })(input);
  }

  startChild(input: ChildInput): Promise<WorkflowHandle<ChildStep>> {
    const start = input.start;
    const workflowID = childWorkflowId(start.frame.runId, start.resume === undefined ? 0 : input.generation);
    return this.dbos.startWorkflow(this.childWorkflow, { workflowID, queueName: this.options.childQueue, workflowAttributes: { rootRunId: treeOf(input) } })(input);
  }

  /** The workflow id of the tree's latest run: its root's, or its latest resume's. */
  async latestRun(rootRunId: string): Promise<string> {
    const runs = await this.treeRuns(rootRunId);
    if (runs.length === 0) throw new ConfigurationError(`no durable tree has root run id "${rootRunId}" in ${this.address}.`);
    return runs[runs.length - 1]!.workflowID;
  }

  /** The tree's root workflow and its resumes, in order, with their inputs and outputs. */
  async treeRuns(rootRunId: string) {
    const prefix = rootWorkflowId(rootRunId, 0);
    const found = await this.dbos.listWorkflows({ workflow_id_prefix: prefix, workflowName: ROOT_WORKFLOW, loadInput: true, loadOutput: true });
    return found
      .filter((w) => w.workflowID === prefix || w.workflowID.startsWith(`${prefix}:resume:`))
      .map((w) => ({ ...w, generation: (w.input?.[0] as RootInput | undefined)?.generation ?? 0 }))
      .sort((a, b) => a.generation - b.generation);
  }

  watch(step: string, rootRunId: string): CheckpointWatch {
    return new StepWatch(this.options.checkpointTimeoutMs ?? 10_000, () => this.stalled(step, rootRunId));
  }

  /** A promise of the tree's answer, rejected instead if a step of the tree cannot be recorded meanwhile. */
  whileRecorded<T>(rootRunId: string, answer: Promise<T>): Promise<T> {
    let stop!: (error: Error) => void;
    const stalled = new Promise<never>((_, reject) => (stop = reject));
    let set = this.waiters.get(rootRunId);
    if (set === undefined) this.waiters.set(rootRunId, (set = new Set()));
    set.add(stop);
    const done = () => {
      set.delete(stop);
      if (set.size === 0 && this.waiters.get(rootRunId) === set) this.waiters.delete(rootRunId);
    };
    return Promise.race([answer, stalled]).catch((error: unknown) => Promise.reject(cancelledTree(rootRunId, error))).finally(done);
  }

  private stalled(step: string, rootRunId: string): void {
    const error = stallError(this.address, step, rootRunId, this.options.checkpointTimeoutMs ?? 10_000);
    this.logger.error({ err: error, root_run_id: rootRunId, step }, 'a step of a durable tree could not be recorded');
    for (const tell of this.waiters.get(rootRunId) ?? []) tell(error);
  }

  /** Where a root's span goes when its workflow runs again: under the run span its recorded steps name, so the trace stays one. */
  async recordedRunSpan(workflowId: string, _input: RootInput): Promise<SpanLink | null> {
    if (this.startedHere.delete(workflowId)) return null;
    this.client ??= this.sdk.DBOSClient.create({ systemDatabaseUrl: systemDatabaseUrl(this.options.systemDatabaseUrl), logger: dbosLogger(this.logger) });
    const steps = (await (await this.client).listWorkflowSteps(workflowId)) ?? [];
    for (const s of steps) {
      const span = (s.output as { span?: StepSpan | null } | null)?.span;
      if (span) return { traceId: span.traceId, spanId: span.runSpanId, flags: 1 };
    }
    return null;
  }

  /** Trees this executor left unfinished that another version of its agents recorded: DBOS leaves them for a worker of that version; say what changed. */
  private async warnOfOtherVersions(): Promise<void> {
    const pending = await this.dbos.listWorkflows({ status: 'PENDING', executorId: this.executorId, workflowName: ROOT_WORKFLOW, loadInput: true }).catch(() => []);
    for (const w of pending) {
      if (w.applicationVersion === this.version) continue;
      const input = w.input?.[0] as RootInput | undefined;
      if (input === undefined) continue;
      try {
        this.registry.checkShape(input.frame.runId, input.agent, input.shape);
      } catch (error) {
        this.logger.warn({ err: error, root_run_id: input.frame.runId }, 'an unfinished durable tree of another version of its agents is left for a worker of that version');
      }
    }
  }
}

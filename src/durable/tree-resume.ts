import { checkDecisions, waitsOf } from '../agent/run-suspension.js';
import { ConfigurationError } from '../core/errors.js';
import type { Decisions } from '../run/interruption.js';
import { refuseUnknownKeys } from '../core/options.js';
import { placedData } from '../run/run-driver.js';
import type { RunSnapshot } from '../run/snapshot/run-snapshot.js';
import type { AgentRegistry } from './agent-registry.js';
import type { WorkflowHandle, WorkflowStatus } from './dbos-sdk.js';
import { ResumeRefusedError } from './durable-errors.js';
import { rootWorkflowId } from './tree-records.js';
import type { RootInput, TreeOutput } from './tree-runs.js';

type TreeRun = WorkflowStatus & { readonly generation: number };

/** What a resume needs of the worker. */
export interface ResumeHost {
  readonly registry: AgentRegistry;
  treeRuns(rootRunId: string): Promise<TreeRun[]>;
  startRoot(workflowID: string, input: RootInput, queue: string | undefined): Promise<WorkflowHandle<TreeOutput>>;
}

/**
 * Resumes a suspended tree by its root run id, from any worker. The suspension is the output of
 * the tree's latest run (PostgreSQL holds it, no process does); its resume is the run after it,
 * `symfonic:<rootRunId>:resume:<n>`. DBOS starts a workflow id once, so of two resumes of one
 * suspension one starts and the other is refused; decisions for a suspension already resumed,
 * or for none, are refused before anything runs.
 */
export async function resumeTree(host: ResumeHost, rootRunId: string, options: { decisions: Decisions }): Promise<WorkflowHandle<TreeOutput>> {
  if (typeof options !== 'object' || options === null) throw new ConfigurationError('durable resume(rootRunId, { decisions }) needs its options: one decision for each interruption.');
  refuseUnknownKeys('durable resume', options, ['decisions']);
  const decided = Object.keys((options.decisions ?? {}) as object).sort();
  const runs = await host.treeRuns(rootRunId);
  const latest = runs[runs.length - 1];
  if (latest === undefined) throw new ResumeRefusedError(rootRunId, `no durable tree has root run id "${rootRunId}".`);
  const snapshot = latest.status === 'SUCCESS' ? suspendedIn(latest) : undefined;
  if (snapshot === undefined || !sameIds(decided, snapshot)) {
    const answered = runs.findIndex((r, i) => i < runs.length - 1 && r.status === 'SUCCESS' && sameIds(decided, suspendedIn(r)));
    if (answered >= 0) throw new ResumeRefusedError(rootRunId, `the suspension these decisions answer (of ${runs[answered]!.workflowID}) was resumed already, by ${runs[answered + 1]!.workflowID}; a suspension resumes once.`);
    if (snapshot === undefined) throw new ResumeRefusedError(rootRunId, `tree "${rootRunId}" is not suspended: its latest run ${latest.workflowID} is ${describe(latest)}.`);
  }
  const run = snapshot.run;
  checkDecisions(run, options.decisions);
  const first = runs[0]!.input?.[0] as RootInput;
  host.registry.checkShape(rootRunId, snapshot.agent, first.shape);
  const generation = latest.generation + 1;
  const input: RootInput = {
    agent: snapshot.agent,
    task: '',
    frame: placedData(run),
    // The resumed span starts under the one it suspended in: the trace stays one.
    parentSpan: run.span ?? null,
    shape: host.registry.root(snapshot.agent).shape,
    generation,
    resume: { run, decisions: options.decisions },
  };
  try {
    return await host.startRoot(rootWorkflowId(rootRunId, generation), input, undefined);
  } catch (error) {
    if ((error as Error | null)?.name === 'DBOSWorkflowIDInUseError') {
      throw new ResumeRefusedError(rootRunId, `tree "${rootRunId}" was resumed already (by ${rootWorkflowId(rootRunId, generation)}, started elsewhere); a suspension resumes once.`);
    }
    throw error;
  }
}

/** The snapshot a run's output holds, when it suspended. */
function suspendedIn(run: TreeRun): RunSnapshot | undefined {
  const out = run.output as TreeOutput | undefined;
  const snapshot = out !== undefined && 'response' in out && out.response.status === 'suspended' ? out.response.snapshot : null;
  if (snapshot === null) return undefined;
  if ('enc' in snapshot) {
    throw new ConfigurationError(
      'durable resume: this tree\'s root agent encrypts its snapshots (snapshotEncryptionKey), and a durable tree\'s snapshot stays in PostgreSQL, read by the worker: construct durable agents without snapshotEncryptionKey (encrypt the database instead).',
    );
  }
  return snapshot;
}

function sameIds(decided: readonly string[], snapshot: RunSnapshot | undefined): boolean {
  if (snapshot === undefined) return false;
  const waiting = [...waitsOf(snapshot.run).keys()].sort();
  return waiting.length === decided.length && waiting.every((id, i) => id === decided[i]);
}

function describe(run: TreeRun): string {
  if (run.status === 'PENDING' || run.status === 'ENQUEUED') return 'running';
  const out = run.output as TreeOutput | undefined;
  if (run.status === 'SUCCESS' && out !== undefined) return 'failure' in out ? `failed (${out.failure.name})` : 'completed';
  return run.status.toLowerCase();
}

import { createHash } from 'node:crypto';
import type { Message } from '../model/types.js';
import type { ChildStart, ChildStep, ModelStep, Recorded, RunDriver, StepKey, ToolStep } from '../run/run-driver.js';
import { DurableEngineError } from './durable-errors.js';
import type { Dbos, WorkflowHandle } from './dbos-sdk.js';

/** Where a run stands in its tree, for the workflows of its children. */
export interface DriverPlace {
  /** The root agent's name: every workflow of the tree finds its agent from it. */
  readonly root: string;
  /** Roster names from the root agent down to this run's agent ([] for the root). */
  readonly path: readonly string[];
  /** Which run of the tree this is: 0 the first, n its n-th resume. */
  readonly generation: number;
  /** The tree's root run id: its root run's own id, which names its workflows (its lineage root may be a caller's). */
  readonly rootRunId: string;
}

/** A child workflow's input: the child's start as data, and where its agent is found. */
export interface ChildInput {
  readonly root: string;
  /** Roster names from the root agent down to the child's own. */
  readonly path: readonly string[];
  readonly generation: number;
  readonly start: ChildStart;
  /** The tree's root run id (DriverPlace's); absent in a record written before trees could be placed under a caller. */
  readonly tree?: string;
}

/** The tree a child workflow is of: what its attributes and its steps' watch name it by. */
export function treeOf(input: ChildInput): string {
  return input.tree ?? input.start.frame.rootRunId;
}

/** What the driver needs of the engine: DBOS, the child workflow, and the checkpoint watch. */
export interface StepEngine {
  readonly dbos: Dbos;
  startChild(input: ChildInput): Promise<WorkflowHandle<ChildStep>>;
  /** Starts watching a step's record: the engine tells the tree's caller if it does not land in time. */
  watch(step: string, rootRunId: string): CheckpointWatch;
}

export interface CheckpointWatch {
  /** The step's body runs: its own time is not the database's. */
  pause(): void;
  resume(): void;
  stop(): void;
}

/** A child's run id from its step's key: the same on every execution, unique in the tree (the parent's id is). */
export function derivedRunId(key: StepKey): string {
  return createHash('sha256').update(`${key.runId}:${key.turn}:${key.index}`).digest('hex').slice(0, 32);
}

/**
 * The run driver on DBOS Transact: each model and tool call is a step whose result DBOS records
 * in PostgreSQL (named by its key, so a replay that drifts fails DBOS's name check instead of
 * reading a wrong result), and each delegation a child workflow plus the step that reads its
 * result. Both take their DBOS function ids synchronously, when called: the loop calls the
 * driver in call order before anything awaits, so a replay gets every id back in the same order.
 */
export class DbosDriver implements RunDriver {
  constructor(
    private readonly engine: StepEngine,
    private readonly place: DriverPlace,
  ) {}

  childRunId(key: StepKey): string {
    return derivedRunId(key);
  }

  model(key: StepKey, call: () => Promise<ModelStep>): Promise<Recorded<ModelStep>> {
    return this.step(`model:${key.runId}:${key.turn}`, call);
  }

  tool(key: StepKey, call: () => Promise<ToolStep>): Promise<Recorded<ToolStep>> {
    return this.step(`tool:${key.runId}:${key.turn}:${key.index}:${key.name}`, call);
  }

  history(runId: string, load: () => Promise<readonly Message[]>): Promise<Recorded<readonly Message[]>> {
    return this.step(`history:${runId}`, load);
  }

  /** The child's workflow is started, and its result read in a step of this run's: a read back result says the child's work is done. */
  child(_key: StepKey, start: ChildStart): Promise<Recorded<ChildStep>> {
    const input: ChildInput = { root: this.place.root, path: [...this.place.path, start.agent], generation: this.place.generation, start, tree: this.place.rootRunId };
    let started: Promise<WorkflowHandle<ChildStep>>;
    try {
      this.inWorkflow(`child:${start.frame.runId}`);
      started = this.engine.startChild(input);
    } catch (error) {
      return Promise.reject(engineError(error));
    }
    // Read inside the step; never left unhandled here when the step was recorded and does not read it.
    started.catch(() => undefined);
    return this.step(`child:${start.frame.runId}`, () => started.then((handle) => handle.getResult()));
  }

  private step<T>(name: string, body: () => Promise<T>): Promise<Recorded<T>> {
    let ran = false;
    let watch: CheckpointWatch | undefined;
    let result: Promise<T>;
    try {
      this.inWorkflow(name);
      watch = this.engine.watch(name, this.place.rootRunId);
      const w = watch;
      result = this.engine.dbos.runStep(
        async () => {
          ran = true;
          w.pause();
          try {
            return await body();
          } finally {
            w.resume();
          }
        },
        { name },
      );
    } catch (error) {
      watch?.stop();
      return Promise.reject(engineError(error));
    }
    return result.then(
      (value) => {
        watch.stop();
        return { value, replayed: !ran };
      },
      (error: unknown) => {
        watch.stop();
        throw engineError(error);
      },
    );
  }

  /** A step outside its workflow would run unrecorded: refused, since a tree must never go on unrecorded. */
  private inWorkflow(step: string): void {
    if (!this.engine.dbos.isInWorkflow()) {
      throw new DurableEngineError(`step "${step}" of tree "${this.place.rootRunId}" was called outside its workflow (or inside another step), where DBOS would not record it.`);
    }
  }
}

/** DBOS's own refusals fail the run; the recorded or real failure of a step's body goes on as itself. */
function engineError(error: unknown): unknown {
  const name = (error as Error | null)?.name ?? '';
  if (error instanceof Error && name.startsWith('DBOS')) return new DurableEngineError(`${name}: ${error.message}`, { cause: error });
  return error;
}

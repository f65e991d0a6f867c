import type { SymfonicAgent } from '../agent/symfonic-agent.js';
import type { Resumption } from '../delegation/framed-child.js';
import { runServed, type ServedOptions } from './served-run.js';
import type { ServedRun, ServedTask } from './served-task.js';

/**
 * What runs a served agent's tasks: in this process (a SymfonicAgent's run, gone with the
 * process), or as durable trees (durable-runner.ts), which another replica finishes when the
 * one running a task dies.
 */
export interface TaskRunner {
  /** The served agent: its card, its name, its logger, its sessions. */
  readonly agent: SymfonicAgent;
  /** Its tasks are durable trees: a task whose replica died is taken over, not failed. */
  readonly durable: boolean;
  /** A stretch of a task: its first run, or (given the decisions) the next after a pause. */
  stretch(text: string, options: ServedOptions, resume: Resumption | undefined): ServedRun;
  /** A durable task whose replica died, finished here: its tree recovered and its answer read. */
  takeOver(task: ServedTask): ServedRun;
}

/** The tasks run in this process, each a run of the agent placed as the wire placed it. */
export function inProcessRunner(agent: SymfonicAgent): TaskRunner {
  return {
    agent,
    durable: false,
    stretch: (text, options, resume) => (signal, events) => runServed(agent, text, options, signal, events, resume),
    takeOver: (task) => () => Promise.reject(new Error(`task ${task.id} is not a durable tree: this server cannot take it over`)),
  };
}

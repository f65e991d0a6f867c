import { z } from 'zod';
import { readOptions } from '../core/options.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const MiB = 1024 * 1024;

/** The bounds on one principal's tasks, the same for every task store (in memory, Redis). */
export interface TaskLimits {
  /** Paused (input-required) tasks a principal may hold; at the bound its new messages are refused until one ends. Default 1000. */
  maxPausedPerPrincipal: number;
  /** Bytes of kept snapshots and messages a principal's paused tasks may hold; past it, new messages are refused likewise. Default 64 MiB. */
  maxPausedBytesPerPrincipal: number;
  /** Finished tasks kept per principal for GetTask and ListTasks; past it, that principal's oldest go first. Default 10,000. */
  maxFinishedPerPrincipal: number;
  /** Bytes of answers and messages a principal's finished tasks may hold; past it, its oldest go first. Default 64 MiB. */
  maxFinishedBytesPerPrincipal: number;
  /** How long a paused task waits for its decisions before it expires (`failed`, its snapshot deleted). Default 7 days. */
  pausedTtlMs: number;
  /** How long a finished task is kept. Default 1 day. */
  finishedTtlMs: number;
}

export type TaskLimitOptions = Partial<TaskLimits>;

const count = (min: number) => z.number().int().min(min).max(10_000_000).optional();
const bytes = z.number().int().positive().max(64 * 1024 * MiB).optional();
const ttl = z.number().int().positive().max(366 * DAY_MS).optional();

export const taskLimitsShape = {
  maxPausedPerPrincipal: count(1),
  maxPausedBytesPerPrincipal: bytes,
  maxFinishedPerPrincipal: count(0),
  maxFinishedBytesPerPrincipal: bytes,
  pausedTtlMs: ttl,
  finishedTtlMs: ttl,
};

const schema = z.object(taskLimitsShape).strict();

/** `options` checked (unknown keys refused, each value in range) and completed with the defaults. */
export function readTaskLimits(what: string, options: unknown): TaskLimits {
  const o = readOptions(what, options ?? {}, schema, { ignoreUndefined: true, example: `new ${what}({ maxPausedPerPrincipal: 1000, pausedTtlMs: 7 * 24 * 3600 * 1000 })` });
  return {
    maxPausedPerPrincipal: o.maxPausedPerPrincipal ?? 1000,
    maxPausedBytesPerPrincipal: o.maxPausedBytesPerPrincipal ?? 64 * MiB,
    maxFinishedPerPrincipal: o.maxFinishedPerPrincipal ?? 10_000,
    maxFinishedBytesPerPrincipal: o.maxFinishedBytesPerPrincipal ?? 64 * MiB,
    pausedTtlMs: o.pausedTtlMs ?? 7 * DAY_MS,
    finishedTtlMs: o.finishedTtlMs ?? DAY_MS,
  };
}

/**
 * A driver that keeps every step's result in memory, as a durable engine would keep it in its
 * database: results go through JSON (what survives a process is plain data), a step recorded
 * earlier is read back instead of run, and every call is logged in the order the driver saw it.
 */
import { createHash } from 'node:crypto';
import { frameFrom } from '../../src/run/run-frame.js';
import type { Scope } from '../../src/core/scope.js';
import type { ChildStart, Recorded, RunDriver, StepKey } from '../../src/run/run-driver.js';

export const keyName = (k: StepKey): string => `${k.kind}:${k.runId}:${k.turn}:${k.index}:${k.name}`;

export class RecordingDriver implements RunDriver {
  readonly records: Map<string, unknown>;
  /** Step names in the order the driver was called. */
  readonly seen: string[] = [];
  /** Events in order: "call <step>" when the driver is called, "done <step>" when a body it ran ended. */
  readonly log: string[] = [];
  readonly starts: ChildStart[] = [];
  made = 0;
  replayed = 0;

  /** `from`: the records of an earlier execution, read back where a step matches. */
  constructor(from?: RecordingDriver) {
    this.records = new Map(from?.records ?? []);
  }

  childRunId(key: StepKey): string {
    return createHash('sha256').update(`${key.runId}:${key.turn}:${key.index}`).digest('hex').slice(0, 32);
  }

  model<T>(key: StepKey, call: () => Promise<T>): Promise<Recorded<T>> {
    return this.step(key, call);
  }

  tool<T>(key: StepKey, call: () => Promise<T>): Promise<Recorded<T>> {
    return this.step(key, call);
  }

  child<T>(key: StepKey, start: ChildStart, run: () => Promise<T>): Promise<Recorded<T>> {
    this.starts.push(JSON.parse(JSON.stringify(start)) as ChildStart);
    return this.step(key, run);
  }

  private step<T>(key: StepKey, call: () => Promise<T>): Promise<Recorded<T>> {
    const name = keyName(key);
    this.seen.push(name);
    this.log.push(`call ${name}`);
    if (this.records.has(name)) {
      this.replayed++;
      return Promise.resolve({ value: this.records.get(name) as T, replayed: true });
    }
    return call().then((value) => {
      const plain = JSON.parse(JSON.stringify(value)) as T;
      this.records.set(name, plain);
      this.made++;
      this.log.push(`done ${name}`);
      return { value: plain, replayed: false };
    });
  }
}

/** A root's placement at the child door, with a driver: how a durable engine opens a run from data. */
export function rootPlacement(runId: string, driver: RunDriver, scope?: Scope) {
  return { frame: frameFrom({ runId, rootRunId: runId, parentRunId: null, depth: 0, ...(scope ? { scope } : {}) }), ledger: undefined, outputType: undefined, driver };
}

import { randomBytes } from 'node:crypto';
import type { AgentResponse } from '../agent/agent-response.js';
import { checkDecisions } from '../agent/run-suspension.js';
import { ConfigurationError } from '../core/errors.js';
import type { Interruption } from '../run/interruption.js';
import type { Resumption } from '../delegation/framed-child.js';
import { SNAPSHOT_VERSION, type RunSnapshot, type SuspendedRun } from '../run/snapshot/run-snapshot.js';
import { checkSignature, sealSnapshot } from '../run/snapshot/snapshot-codec.js';
import { BadDecisions, readDecisions, wireInterruption, type WireInterruption } from './pause-wire.js';

/**
 * The key a server signs the snapshots of its paused tasks with: its own, made when it starts.
 * A paused task's snapshot never leaves the server, so no one else has to check it; the
 * signature makes sure what resumes is what paused.
 */
export function serverSnapshotKey(): string {
  return randomBytes(32).toString('hex');
}

/**
 * A served tree that suspended, kept with its task until a message brings the decisions: its
 * run written down as a signed snapshot, and its interruptions as the wire shows them.
 */
export class ServedPause {
  /** The size of the kept snapshot, in bytes of its JSON: what a principal's paused tasks are bounded by. */
  readonly bytes: number;

  constructor(
    /** The tree as it suspended, sealed with the key. */
    readonly snapshot: RunSnapshot,
    readonly interruptions: readonly Interruption[],
    private readonly key: string,
  ) {
    this.bytes = Buffer.byteLength(JSON.stringify(this.snapshot));
  }

  /** The pause of a served run that just suspended: its tree sealed with `key`. */
  static of(agent: string, response: AgentResponse, key: string): ServedPause {
    const run = (response as { suspension?: SuspendedRun }).suspension;
    if (run === undefined) throw new Error('a served run that suspended came back without its suspended state');
    return new ServedPause(sealSnapshot({ version: SNAPSHOT_VERSION, agent, run }, key), response.interruptions, key);
  }

  /** As a shared store keeps it: the sealed snapshot and the interruptions (ServedPause.restored reads it back). */
  toJSON(): { snapshot: RunSnapshot; interruptions: readonly Interruption[] } {
    return { snapshot: this.snapshot, interruptions: this.interruptions };
  }

  /** A pause a shared store kept; its snapshot is checked against `key` when decisions come. */
  static restored(data: { snapshot: RunSnapshot; interruptions: readonly Interruption[] }, key: string): ServedPause {
    return new ServedPause(data.snapshot, data.interruptions, key);
  }

  get wire(): WireInterruption[] {
    return this.interruptions.map(wireInterruption);
  }

  /**
   * The resumption a message's parts bring: the decisions read and checked against exactly the
   * tree's interruptions, the kept snapshot checked against its signature. A BadDecisions names
   * what is wrong; nothing has run.
   */
  resumption(parts: readonly Record<string, unknown>[]): Resumption {
    const given = readDecisions(parts, this.interruptions);
    checkSignature(this.snapshot, this.key, this.snapshot.agent);
    try {
      return { run: this.snapshot.run, decisions: checkDecisions(this.snapshot.run, given) };
    } catch (error) {
      if (error instanceof ConfigurationError) throw new BadDecisions(error.message.replace(/^resume: /, ''));
      throw error;
    }
  }
}

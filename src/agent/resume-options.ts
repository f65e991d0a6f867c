import type { ZodType } from 'zod';
import { outputTypeProblem } from '../core/output-type.js';
import { isAccounting, type Accounting } from '../accounting/accounting.js';
import type { MetricsCollector } from '../accounting/metrics-collector.js';
import { ConfigurationError } from '../core/errors.js';
import type { Decisions } from '../run/interruption.js';
import { refuseUnknownKeys } from '../core/options.js';
import type { AskUser } from '../run/run-frame.js';
import type { GivenAgain, RunSnapshot } from '../run/snapshot/run-snapshot.js';
import type { RunEvent } from './run-events.js';
import type { RunState } from './run-state.js';

/** What `resume` takes beside the snapshot. */
export interface ResumeOptions {
  /** One decision for each of the snapshot's interruptions, by id. */
  decisions: Decisions;
  signal?: AbortSignal;
  onEvent?: (event: RunEvent) => void;
  askUser?: AskUser;
  /**
   * The ledger the root accounts in when the agent has none of its own: the one the suspended
   * run was given in its run options (a collector is not data, so the snapshot cannot carry it).
   */
  metricsCollector?: MetricsCollector;
  /** The schema the suspended root was given in its run options, given again (a schema is not data either). */
  outputType?: ZodType;
}

/** Resume options after validation. `decisions` is checked against the snapshot (checkDecisions). */
export interface ResumeRequest {
  readonly decisions: unknown;
  readonly signal: AbortSignal | undefined;
  readonly onEvent: ((event: RunEvent) => void) | undefined;
  readonly askUser: AskUser | undefined;
  readonly accounting: Accounting | undefined;
  readonly outputType: ZodType | undefined;
}

const fn = (what: string) => [(f: unknown) => typeof f === 'function', `${what} must be a function.`] as const;
// Each option's check and what it says when the check fails, in the order problems are listed.
// Checked by hand, as run options are: a resume reads its options once per call, and a zod
// schema of custom checks cost more than the rest of reading them.
const RULES: Readonly<Record<keyof ResumeOptions, readonly [(value: unknown) => boolean, string | ((value: unknown) => string)] | undefined>> = {
  // Checked against the snapshot's interruptions in checkDecisions, which names each id.
  decisions: undefined,
  signal: [(s) => s instanceof AbortSignal, 'signal must be an AbortSignal.'],
  onEvent: fn('onEvent'),
  askUser: fn('askUser'),
  metricsCollector: [isAccounting, 'metricsCollector must be a MetricsCollector (or another Accounting: { id, open(frame, agentName) }).'],
  outputType: [(s) => outputTypeProblem(s, 'outputType') === undefined, (s) => `${outputTypeProblem(s, 'outputType')!} (the one the suspended run was given)`],
};
const KEYS = Object.keys(RULES);

/** Validates resume's options, before the snapshot is read: unknown keys refused naming the known ones, then every value's problem in one error. */
export function readResumeOptions(options: unknown): ResumeRequest {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new ConfigurationError('resume needs an options object: agent.resume(snapshot, { decisions: { [interruption.id]: { approve: true } } })');
  }
  refuseUnknownKeys('resume', options, KEYS, { ignoreUndefined: true });
  const read = options as Partial<Record<keyof ResumeOptions, unknown>>;
  const problems: string[] = [];
  for (const key of KEYS as (keyof ResumeOptions)[]) {
    const rule = RULES[key];
    const value = read[key];
    if (rule === undefined || value === undefined || rule[0](value)) continue;
    problems.push(typeof rule[1] === 'string' ? rule[1] : rule[1](value));
  }
  if (problems.length > 0) throw new ConfigurationError(`resume: ${problems.join('; ')}`);
  return {
    decisions: read.decisions,
    signal: read.signal as AbortSignal | undefined,
    onEvent: read.onEvent as ResumeRequest['onEvent'],
    askUser: read.askUser as AskUser | undefined,
    accounting: read.metricsCollector as Accounting | undefined,
    outputType: read.outputType as ZodType | undefined,
  };
}

/**
 * What a suspending root was given in its run options that a snapshot cannot hold: the ledger it
 * accounted in (when the agent has none of its own) and its outputType. Only that it was given is
 * written down; resume must be given it again.
 */
export function givenAgainOf(run: RunState): GivenAgain | undefined {
  const given: { -readonly [K in keyof GivenAgain]: GivenAgain[K] } = {};
  if (run.offeredLedger) given.metricsCollector = true;
  // Whether, not which: a schema that changed with an upgrade between the pause and the resume is
  // the caller's to give, and the answer is validated against the one given.
  if (run.outputType !== undefined) given.outputType = true;
  return Object.keys(given).length === 0 ? undefined : given;
}

/**
 * Refuses a resume that leaves out what the suspended root was given: resumed without its ledger,
 * the calls after the pause would land in a collector the caller never sees, under no budget;
 * without its outputType, its answer would not be validated. Nothing has run yet. Given when the
 * snapshot does not ask for it is accepted (a snapshot written before `givenAgain` existed says
 * nothing either way).
 */
export function checkGivenAgain(agent: string, snapshot: RunSnapshot, request: ResumeRequest, hasOwnLedger: boolean): void {
  const given = snapshot.givenAgain;
  if (given?.metricsCollector === true && request.accounting === undefined && !hasOwnLedger) {
    throw new ConfigurationError(
      `resume: this tree's root (agent "${agent}") was run with a metricsCollector in its run options, and its calls after the pause must be charged there too: ` +
        `pass it again, agent.resume(snapshot, { decisions, metricsCollector }). Nothing was run.`,
    );
  }
  // Resumed without it, the root's model is no longer asked for JSON and its answer is neither
  // parsed nor validated: response.output would be missing where the caller expects it.
  if (given?.outputType === true && request.outputType === undefined) {
    throw new ConfigurationError(
      `resume: this tree's root (agent "${agent}") was run with an outputType, and a schema is not data the snapshot can hold: ` +
        `pass it again, agent.resume(snapshot, { decisions, outputType }). Nothing was run.`,
    );
  }
}

/**
 * The options of `symfonic demo --suspend` and `--resume FILE`, checked before anything runs:
 * which of the two, where the snapshot goes, the decisions (`--decide ID=…`, `--approve-all`)
 * and the key snapshots are signed with.
 */
import type { Decision } from '../run/interruption.js';
import type { DecisionForm } from '../run/interruption-kinds.js';
import { UsageError } from './args.js';

export const DEFAULT_SNAPSHOT_FILE = 'symfonic-demo.snapshot.json';

/**
 * The demo's signing key when SYMFONIC_SNAPSHOT_KEY is unset. Published with the code, so it
 * catches an edited or foreign file but keeps no secret: an application keeps its own key secret.
 */
export const DEMO_SNAPSHOT_KEY = 'symfonic-demo-snapshot-key';

/** One --decide: the interruption's id and what was decided, with the text it was read from. */
export interface DecideArg {
  readonly id: string;
  readonly decision: Decision;
  readonly raw: string;
}

export interface PauseSettings {
  readonly mode: 'suspend' | 'resume';
  /** --resume: the snapshot file the run goes on from. */
  readonly resumeFile: string | undefined;
  /** Where the snapshot goes if the run suspends: --snapshot, else the file resumed from, else DEFAULT_SNAPSHOT_FILE. */
  readonly snapshotFile: string;
  readonly decide: readonly DecideArg[];
  readonly approveAll: boolean;
  readonly snapshotKey: string;
}

/** The options this file reads, as parseArgs gives them. */
export interface PauseArgs {
  suspend?: boolean | undefined;
  resume?: string | undefined;
  snapshot?: string | undefined;
  decide?: string[] | undefined;
  'approve-all'?: boolean | undefined;
  remote?: boolean | undefined;
  tenant?: string | undefined;
  'budget-usd'?: string | undefined;
}

/** How --decide spells each decision form (after `ID=`). */
export function cliVerb(form: DecisionForm): string {
  return form === 'answer' ? 'answer:TEXT' : form;
}

const DECIDE_FORMS = 'ID=approve, ID=decline, ID=decline:REASON, ID=answer:TEXT or ID=retry';

/** "ID=decline:too expensive" → { id, decision: { approve: false, reason: 'too expensive' } }. */
export function parseDecide(raw: string): DecideArg {
  const eq = raw.indexOf('=');
  const id = eq < 0 ? '' : raw.slice(0, eq).trim();
  const word = raw.slice(eq + 1);
  const colon = word.indexOf(':');
  const verb = (colon < 0 ? word : word.slice(0, colon)).trim();
  const text = colon < 0 ? undefined : word.slice(colon + 1);
  const bad = (why: string) => new UsageError(`--decide "${raw}": ${why}; use ${DECIDE_FORMS}`, 'demo');
  if (id === '') throw bad('no interruption id before "="');
  switch (verb) {
    case 'approve':
    case 'retry':
      if (text !== undefined) throw bad(`"${verb}" takes nothing after it`);
      return { id, raw, decision: verb === 'approve' ? { approve: true } : { retry: true } };
    case 'decline':
      return { id, raw, decision: text === undefined || text.trim() === '' ? { approve: false } : { approve: false, reason: text.trim() } };
    case 'answer':
      if (text === undefined || text.trim() === '') throw bad('"answer" needs the answer after a colon, e.g. ID=answer:yes');
      return { id, raw, decision: { answer: text } };
    default:
      throw bad(verb === '' ? 'no decision after "="' : `unknown decision "${verb}"`);
  }
}

function snapshotKey(env: NodeJS.ProcessEnv): string {
  const key = env['SYMFONIC_SNAPSHOT_KEY'];
  if (key === undefined || key === '') return DEMO_SNAPSHOT_KEY;
  if (key.length < 16) throw new UsageError(`SYMFONIC_SNAPSHOT_KEY must be at least 16 characters (it has ${key.length}): it signs snapshots with HMAC-SHA256`, 'demo');
  return key;
}

function refuseWithResume(v: PauseArgs): void {
  if (v.suspend) throw new UsageError('--suspend and --resume: use one (--resume FILE goes on from the file --suspend wrote)', 'demo');
  if (v.tenant !== undefined) throw new UsageError('--tenant does not apply with --resume: the run goes on under the tenant in the snapshot', 'demo');
  if (v['budget-usd'] !== undefined) {
    throw new UsageError("--budget-usd does not apply with --resume: the demo's budget lives in the memory of the process that ran it, so a resumed run would count from zero", 'demo');
  }
}

/** The pause options, or undefined for a plain demo; a UsageError for any that do not go together. */
export function pauseSettings(v: PauseArgs, env: NodeJS.ProcessEnv = process.env): PauseSettings | undefined {
  const decides = v.decide ?? [];
  if (v.resume === undefined && !v.suspend) {
    if (decides.length > 0 || v['approve-all']) throw new UsageError(`${decides.length > 0 ? '--decide' : '--approve-all'} only applies with --resume FILE`, 'demo');
    if (v.snapshot !== undefined) throw new UsageError('--snapshot only applies with --suspend or --resume FILE', 'demo');
    return undefined;
  }
  if (v.remote) throw new UsageError('--remote cannot be combined with --suspend or --resume: a served agent cannot suspend across A2A yet (issue 23)', 'demo');
  if (v.snapshot !== undefined && v.snapshot.trim() === '') throw new UsageError('--snapshot needs a file name, e.g. --snapshot paused.json', 'demo');
  if (v.resume !== undefined) {
    if (v.resume.trim() === '') throw new UsageError(`--resume needs the snapshot file, e.g. --resume ${DEFAULT_SNAPSHOT_FILE}`, 'demo');
    refuseWithResume(v);
  } else if (decides.length > 0 || v['approve-all']) {
    throw new UsageError(`${decides.length > 0 ? '--decide' : '--approve-all'} applies with --resume FILE: --suspend runs until someone must decide`, 'demo');
  }
  const decide = decides.map(parseDecide);
  const twice = decide.find((d, i) => decide.findIndex((e) => e.id === d.id) !== i);
  if (twice) throw new UsageError(`--decide names "${twice.id}" twice: one decision per interruption`, 'demo');
  return {
    mode: v.resume !== undefined ? 'resume' : 'suspend',
    resumeFile: v.resume,
    snapshotFile: v.snapshot ?? v.resume ?? DEFAULT_SNAPSHOT_FILE,
    decide,
    approveAll: v['approve-all'] === true,
    snapshotKey: snapshotKey(env),
  };
}

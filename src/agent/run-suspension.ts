import { trace } from '@opentelemetry/api';
import { ConfigurationError, type BudgetExceededError } from '../core/errors.js';
import type { Decision, Decisions, Interruption } from '../run/interruption.js';
import { decisionFits, decisionsText, kindWithArticle, type CallKind, type DecisionForm } from '../run/interruption-kinds.js';
import type { RunFigures } from '../run/run-outcome.js';
import type { Message, ToolCall } from '../model/types.js';
import type { RunWait, SuspendedRun, WaitingInterruption } from '../run/snapshot/run-snapshot.js';
import { placeFields } from '../run/run-driver.js';
import type { RunState } from './run-state.js';
import { inputDigest } from '../run/snapshot/input-digest.js';
import { checkDigests, preview } from './approval-digests.js';

/** What a run hands up when it suspends: where it stands, and every interruption of its subtree. */
export interface Suspension {
  readonly run: SuspendedRun;
  readonly interruptions: readonly Interruption[];
}

/** An interruption's id: the run, the turn and the call (or the model call) that waits. Unique in a tree, the same on every replay. */
function interruptionId(run: RunState, where: number | 'model'): string {
  return `${run.frame.runId}:${run.turns}:${where}`;
}

function lineage(run: RunState): Pick<Interruption, 'runId' | 'rootRunId' | 'parentRunId' | 'agent' | 'depth'> {
  const f = run.frame;
  return { runId: f.runId, rootRunId: f.rootRunId, parentRunId: f.parentRunId, agent: run.core.name, depth: f.depth };
}

/** A tool call that waits for approval, or (ask_user) for an answer. */
export function toolWait(run: RunState, call: ToolCall, index: number, kind: CallKind, detail: { input?: unknown; question?: string }): { wait: WaitingInterruption; interruption: Interruption } {
  const id = interruptionId(run, index);
  const interruption: Interruption = { id, kind, ...lineage(run), tool: call.name, callId: call.id, ...detail };
  if (kind === 'approval') (interruption as { inputDigest?: string }).inputDigest = inputDigest(call.name, call.arguments);
  return { wait: { id, kind }, interruption };
}

/** A model call a budget refused, under onExceeded 'suspend'. */
export function budgetWait(run: RunState, error: BudgetExceededError): { wait: WaitingInterruption; interruption: Interruption } {
  const id = interruptionId(run, 'model');
  const { tenantId, limitName, limit, spent, reserved, requested } = error;
  return { wait: { id, kind: 'budget', refusal: { tenantId, limitName, limit, spent, reserved, requested } }, interruption: { id, kind: 'budget', ...lineage(run), tenantId, limitName } };
}

/**
 * A message as the snapshot format has it: only the fields a Message has. A user's provider may
 * hand back tool calls carrying fields of their own (a vendor SDK's `type`, `index`), and a
 * facade's history may hold messages that do; the snapshot's reader takes exactly its format,
 * so what this code writes must be that format, or the tree could never be resumed.
 */
function plainMessage(m: Message): Message {
  const out: Message = { role: m.role, content: m.content };
  if (m.toolCalls !== undefined) out.toolCalls = m.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
  if (m.toolCallId !== undefined) out.toolCallId = m.toolCallId;
  return out;
}

/** The run as data, as it suspends: what it cannot be rebuilt without. The root also states its place in the tree. */
export function suspendedRun(run: RunState, waits: RunWait, figures: RunFigures, delegatedTo: readonly string[], isRoot: boolean): SuspendedRun {
  const f = run.frame;
  const out: { -readonly [K in keyof SuspendedRun]: SuspendedRun[K] } = { runId: f.runId, ...placeFields(f, isRoot), messages: run.messages.slice(run.turnFrom).map(plainMessage), turns: run.turns, figures, delegatedTo: [...delegatedTo], waits };
  const records = run.delegationRecords();
  if (records.size > 0) out.delegations = [...records].map(([toolCallId, record]) => ({ toolCallId, ...record }));
  const sc = run.span.spanContext();
  if (trace.isSpanContextValid(sc)) out.span = { traceId: sc.traceId, spanId: sc.spanId, flags: sc.traceFlags };
  return out;
}

/** Every interruption a suspended tree waits on, by id: walked without recursion. */
export function waitsOf(root: SuspendedRun): Map<string, WaitingInterruption> {
  const found = new Map<string, WaitingInterruption>();
  const stack: SuspendedRun[] = [root];
  while (stack.length > 0) {
    const run = stack.pop()!;
    const waits = run.waits;
    if ('model' in waits) found.set(waits.model.id, waits.model);
    else if ('remote' in waits) for (const w of waits.remote.interruptions) found.set(w.id, w);
    else
      for (const c of waits.calls) {
        if ('wait' in c) found.set(c.wait.id, c.wait);
        else if ('child' in c) stack.push(c.child);
      }
  }
  return found;
}

/** Ids named in one error at most. */
const LISTED = 10;

/** A decision form as the API writes it. */
function apiForm(form: DecisionForm, reasonRead: boolean): string {
  if (form === 'approve') return "{ approve: true } (with the interruption's inputDigest, to bind it)";
  if (form === 'decline') return reasonRead ? '{ approve: false, reason? }' : '{ approve: false }';
  return form === 'answer' ? '{ answer: string }' : '{ retry: true }';
}

function isDecision(d: unknown): d is Decision {
  if (typeof d !== 'object' || d === null) return false;
  const o = d as Record<string, unknown>;
  // A key set to undefined is a key not given, as TypeScript's optional `reason?` lets it be written.
  const keys = Object.keys(o).filter((k) => o[k] !== undefined);
  if ('approve' in o) {
    if (o.approve === true) return keys.every((k) => k === 'approve' || (k === 'inputDigest' && typeof o.inputDigest === 'string'));
    return o.approve === false && keys.every((k) => k === 'approve' || (k === 'reason' && typeof o.reason === 'string'));
  }
  if ('answer' in o) return typeof o.answer === 'string' && keys.length === 1;
  if ('retry' in o) return o.retry === true && keys.length === 1;
  return false;
}

/** How each id is named in an error, at most LISTED of them, each cut: a hostile map of 200k long ids makes a short message. */
function listIds(ids: readonly string[]): string {
  const shown = ids.slice(0, LISTED).map((i) => JSON.stringify(i.length > 80 ? `${i.slice(0, 80)}…` : i));
  return ids.length > LISTED ? `${shown.join(', ')} and ${ids.length - LISTED} more` : shown.join(', ');
}

/**
 * Checks the decisions answer exactly the tree's interruptions, each with a decision of its kind,
 * before anything runs: a missing one would leave a branch waiting for nobody, an unknown one is a
 * decision someone believes was applied. An approval that carries an `inputDigest` must carry the
 * digest of the call as the snapshot holds it (what the approver was shown is what runs); with
 * `digestsRequired` (a snapshot nobody can check), every approval must carry one.
 */
export function checkDecisions(root: SuspendedRun, decisions: unknown, rules: { digestsRequired?: boolean } = {}): Decisions {
  if (typeof decisions !== 'object' || decisions === null || Array.isArray(decisions)) {
    throw new ConfigurationError('resume needs { decisions: { [interruptionId]: decision } }: one decision for each interruption of response.interruptions.');
  }
  const waits = waitsOf(root);
  const given = decisions as Record<string, unknown>;
  const missing = [...waits.keys()].filter((id) => !Object.hasOwn(given, id));
  const unknown = Object.keys(given).filter((id) => !waits.has(id));
  if (missing.length > 0 || unknown.length > 0) {
    const parts = [missing.length > 0 ? `no decision for ${listIds(missing)}` : '', unknown.length > 0 ? `decisions for ${listIds(unknown)}, which this snapshot does not wait on` : ''];
    throw new ConfigurationError(`resume: ${parts.filter((p) => p !== '').join('; ')}. Decide each of response.interruptions by its id; nothing was run.`);
  }
  for (const [id, wait] of waits) {
    const d = given[id];
    if (!isDecision(d) || !decisionFits(wait.kind, d)) {
      throw new ConfigurationError(`resume: the decision for "${id}" (${kindWithArticle(wait.kind)} interruption) must be ${decisionsText(wait.kind, apiForm)}; got ${preview(d)}. Nothing was run.`);
    }
  }
  checkDigests(root, given as Decisions, rules.digestsRequired === true);
  return given as Decisions;
}

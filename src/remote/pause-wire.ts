/**
 * The wire shapes of a pause across A2A (docs/design.md, "Pauses across the wire"), plain JSON any
 * peer reads and writes: the interruptions an `input-required` task's status message carries in
 * a data part, and the decisions a message to that task carries back in one.
 */
import type { Decision, Decisions, Interruption } from '../run/interruption.js';
import { isInterruptionKind, takes, waitsForText } from '../run/interruption-kinds.js';
import { isObject } from './rpc-envelope.js';

/** An interruption as the status message's data part spells it: what a person needs to decide, no lineage. */
export interface WireInterruption {
  id: string;
  kind: Interruption['kind'];
  /** The agent whose run waits. */
  agent: string;
  /** approval and question: the tool call that waits (ask_user for a question). */
  tool?: string;
  /** approval: the call's validated input. */
  input?: unknown;
  /** question: what was asked. */
  question?: string;
  /** budget: the limit that refused the model call. */
  limitName?: 'maxTokens' | 'maxCostUsd';
}

/** The data part of an input-required task's status message. */
export interface InterruptionsPart {
  interruptions: WireInterruption[];
}

/** The data part of a message that answers an input-required task. */
export interface DecisionsPart {
  decisions: Decisions;
}

export function wireInterruption(i: Interruption): WireInterruption {
  const out: WireInterruption = { id: i.id, kind: i.kind, agent: i.agent };
  if (i.tool !== undefined) out.tool = i.tool;
  if (i.input !== undefined) out.input = i.input;
  if (i.question !== undefined) out.question = i.question;
  if (i.limitName !== undefined) out.limitName = i.limitName;
  return out;
}

/** Longest interruption id taken from the wire (a snapshot holds at most 300 characters). */
const MAX_ID = 256;

/** The interruptions a data part holds, each checked; undefined when the part holds none that read. */
export function readInterruptionsPart(data: unknown): WireInterruption[] | undefined {
  if (!isObject(data) || !Array.isArray(data.interruptions)) return undefined;
  const out: WireInterruption[] = [];
  for (const raw of data.interruptions) {
    if (!isObject(raw)) return undefined;
    const { id, kind, agent, tool, question, limitName } = raw;
    if (typeof id !== 'string' || id === '' || id.length > MAX_ID || !isInterruptionKind(kind)) return undefined;
    const i: WireInterruption = { id, kind, agent: typeof agent === 'string' ? agent.slice(0, 200) : '' };
    if (typeof tool === 'string') i.tool = tool.slice(0, 200);
    if (raw.input !== undefined) i.input = raw.input;
    if (typeof question === 'string') i.question = question;
    if (limitName === 'maxTokens' || limitName === 'maxCostUsd') i.limitName = limitName;
    out.push(i);
  }
  return out.length > 0 ? out : undefined;
}

/** The words any client shows beside the data part: who waits for what, and how to answer. */
export function pauseText(agent: string, interruptions: readonly WireInterruption[]): string {
  const what = interruptions.map((i) => `${waitsForText(i.kind, i)} (${i.id})`);
  return (
    `agent "${agent}" waits for ${what.join(', ')}. Answer with a message to this task carrying a data part ` +
    `{ "decisions": { "<id>": { "approve": true } | { "approve": false, "reason": "…" } | { "answer": "…" } | { "retry": true } } }` +
    (answersByText(interruptions) ? ', or the answer as text.' : '.')
  );
}

/** A text reply answers the task when it waits on one interruption, of a kind an answer decides. */
const answersByText = (waiting: readonly Pick<Interruption, 'kind'>[]) => waiting.length === 1 && takes(waiting[0]!.kind, 'answer');

/** Why a message cannot answer a paused task: said to the client as invalid params. */
export class BadDecisions extends Error {}

/**
 * The decisions a message to a paused task carries: a data part `{ decisions }`, or, when the
 * tree waits on one question only, the answer as the message's text. Checked against the
 * interruptions elsewhere (checkDecisions); here only that there is something to check.
 */
export function readDecisions(parts: readonly Record<string, unknown>[], waiting: readonly Pick<Interruption, 'id' | 'kind'>[]): Record<string, unknown> {
  for (const p of parts) {
    if (!isObject(p.data) || p.data.decisions === undefined) continue;
    if (!isObject(p.data.decisions)) throw new BadDecisions('the data part\'s "decisions" must be an object: { "<interruption id>": { "approve": true } }');
    return p.data.decisions;
  }
  const text = parts.filter((p) => typeof p.text === 'string').map((p) => p.text as string).join('\n');
  if (text !== '' && answersByText(waiting)) return { [waiting[0]!.id]: { answer: text } satisfies Decision };
  const ids = waiting.map((w) => `"${w.id}" (${w.kind})`).join(', ');
  throw new BadDecisions(
    `this task waits for decisions on ${ids}: send a data part { "decisions": { "<id>": { "approve": true } } }` +
      (answersByText(waiting) ? ', or the answer as text' : '; a text reply answers only a single pending question'),
  );
}

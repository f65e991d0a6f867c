/**
 * The kinds of interruption, declared once: what each waits on, which decisions answer it, and
 * how it is said to a person. Every list of kinds (the snapshot's reader, the wire's reader, the
 * decision checks, the CLI's report and flags) is derived from this table, so a new kind is an
 * entry here, and a format that has to say something of its own about it fails to compile until
 * it does.
 */
import type { Decision, Interruption } from './interruption.js';

/** The forms a decision takes; each kind lists the ones that answer it. */
export type DecisionForm = 'approve' | 'decline' | 'answer' | 'retry';

/** What an interruption says of itself: the fields a person is shown. */
type Shown = Pick<Interruption, 'tool' | 'input' | 'question' | 'tenantId' | 'limitName'>;

interface KindDeclaration {
  /** A tool call waits (its turn suspends at the call), or the run's next model call does. */
  readonly waitsOn: 'call' | 'model';
  /** The decisions that answer it, the one to suggest first. */
  readonly decisions: readonly [DecisionForm, ...DecisionForm[]];
  /** Whether a decline's reason is read by anyone (the model, as the call's result). */
  readonly reasonRead: boolean;
  /** What the model reads as the call's result when the person declines (a call's kinds). */
  readonly declined?: string;
  /** "approval of tool …": what a paused A2A task waits for, in its status text. */
  readonly waitsFor: (i: Shown) => string;
  /** "researcher (depth 1) asks to run …": what a person is shown, after who waits. */
  readonly told: (who: string, i: Shown) => string;
}

export const INTERRUPTION_KINDS = {
  approval: {
    waitsOn: 'call',
    decisions: ['approve', 'decline'],
    reasonRead: true,
    declined: 'The user declined this call, so it did not run.',
    waitsFor: (i) => `approval of tool "${i.tool ?? '?'}"`,
    told: (who, i) => `${who} asks to run ${i.tool ?? '?'} ${JSON.stringify(i.input ?? {})}`,
  },
  question: {
    waitsOn: 'call',
    decisions: ['answer', 'decline'],
    reasonRead: true,
    declined: 'The user declined to answer.',
    waitsFor: (i) => `an answer to "${i.question ?? ''}"`,
    told: (who, i) => `${who} asks: ${i.question ?? ''}`,
  },
  budget: {
    waitsOn: 'model',
    decisions: ['retry', 'decline'],
    reasonRead: false,
    waitsFor: (i) => `a budget decision on ${i.limitName ?? 'a limit'}`,
    told: (who, i) => `${who}: a model call refused by tenant ${i.tenantId ?? '?'}'s ${i.limitName ?? 'limit'}`,
  },
} as const satisfies Record<string, KindDeclaration>;

export type InterruptionKind = keyof typeof INTERRUPTION_KINDS;

/** The kinds a tool call waits on. */
export type CallKind = { [K in InterruptionKind]: (typeof INTERRUPTION_KINDS)[K]['waitsOn'] extends 'call' ? K : never }[InterruptionKind];

/** Every kind, in declaration order: what the snapshot's and the wire's readers accept. */
export const KIND_NAMES = Object.keys(INTERRUPTION_KINDS) as [InterruptionKind, ...InterruptionKind[]];

const declared = (kind: InterruptionKind): KindDeclaration => INTERRUPTION_KINDS[kind];

export function isInterruptionKind(value: unknown): value is InterruptionKind {
  return typeof value === 'string' && Object.hasOwn(INTERRUPTION_KINDS, value);
}

export function isCallKind(kind: InterruptionKind): kind is CallKind {
  return declared(kind).waitsOn === 'call';
}

/** "an approval", "a question": how a message names one. */
export function kindWithArticle(kind: InterruptionKind): string {
  return `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`;
}

const FORM_FITS: Record<DecisionForm, (d: Decision) => boolean> = {
  approve: (d) => 'approve' in d && d.approve === true,
  decline: (d) => 'approve' in d && d.approve === false,
  answer: (d) => 'answer' in d,
  retry: (d) => 'retry' in d,
};

/** Whether a (well-formed) decision answers an interruption of this kind. */
export function decisionFits(kind: InterruptionKind, d: Decision): boolean {
  return declared(kind).decisions.some((form) => FORM_FITS[form](d));
}

/** Whether this kind takes the decision form. */
export function takes(kind: InterruptionKind, form: DecisionForm): boolean {
  return declared(kind).decisions.includes(form);
}

/** The decisions that answer the kind, each as `spell` writes a form (its decline with or without a reason), joined by "or". */
export function decisionsText(kind: InterruptionKind, spell: (form: DecisionForm, reasonRead: boolean) => string): string {
  const k = declared(kind);
  return k.decisions.map((form) => spell(form, k.reasonRead)).join(' or ');
}

/** The decision to suggest first for the kind. */
export function firstDecision(kind: InterruptionKind): DecisionForm {
  return declared(kind).decisions[0];
}

/** What the model reads as a declined call's result. */
export function declinedText(kind: InterruptionKind): string {
  return declared(kind).declined ?? 'The user declined this call, so it did not run.';
}

export function waitsForText(kind: InterruptionKind, i: Shown): string {
  return declared(kind).waitsFor(i);
}

export function toldText(kind: InterruptionKind, who: string, i: Shown): string {
  return declared(kind).told(who, i);
}

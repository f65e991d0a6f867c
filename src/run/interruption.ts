import type { InterruptionKind } from './interruption-kinds.js';

/**
 * A run waits for somebody: a tool call that needs approval, a question for the user, or a model
 * call a budget refused. Anywhere in the tree, it suspends the tree; the interruption says who
 * waits (its lineage) and what for, and its id is what a decision answers.
 */
export interface Interruption {
  readonly id: string;
  /** One of INTERRUPTION_KINDS (interruption-kinds.ts). */
  readonly kind: InterruptionKind;
  readonly runId: string;
  readonly rootRunId: string;
  readonly parentRunId: string | null;
  readonly agent: string;
  readonly depth: number;
  /** approval and question: the tool call that waits. */
  readonly tool?: string;
  readonly callId?: string;
  /** approval: the call's validated input. */
  readonly input?: unknown;
  /**
   * approval: SHA-256 (hex) of the tool's name and the call's arguments. Pass it back with the
   * approval (`{ approve: true, inputDigest }`) to bind the approval to the input the approver was
   * shown: resume refuses it if the snapshot's call is no longer that one.
   */
  readonly inputDigest?: string;
  /** question: what ask_user asked. */
  readonly question?: string;
  /** budget: the refusal. */
  readonly tenantId?: string;
  readonly limitName?: 'maxTokens' | 'maxCostUsd';
}

/** What a person decides for one interruption. */
export type Decision = { approve: true; inputDigest?: string | undefined } | { approve: false; reason?: string } | { answer: string } | { retry: true };

/** Decisions by interruption id. */
export type Decisions = Readonly<Record<string, Decision>>;

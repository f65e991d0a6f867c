import { shownName } from '../core/defaults.js';
import { modelVisibleText } from '../core/redact.js';
import type { DelegationOutcome } from '../observability/attributes.js';
import { emptyUsage, type Usage } from '../core/usage.js';
import type { DelegationCallContext } from './call-context.js';
import type { DelegationRecord } from './delegation-record.js';
import { writeDelegationSpan, type DelegationSpanData } from './delegation-span.js';

/** A run_agent call that did not delegate, or whose child did not answer: what the model reads instead. */
export class Refusal {
  readonly message: string;
  constructor(
    readonly outcome: DelegationOutcome,
    message: string,
    readonly errorType: string = outcome,
  ) {
    // Redacted once, here: the text goes to the model and to the span, and a child's error text
    // is often copied from a provider's answer, which may echo a key.
    this.message = modelVisibleText(message);
  }
}

/**
 * One run_agent call's outcome, recorded once: on its span (delegation-span.ts), in the
 * delegation counter and in the log. Once, because an abort and the child's own end can both
 * try to finish the call, and the outcome the span carries must be the one that happened first.
 */
export class DelegationCall implements DelegationSpanData {
  private finished = false;
  /** Set once the child starts under its run id; a call refused before that names no run. */
  childRunId: string | null = null;
  /** The child's run id as soon as it is minted (a call may still be let go before the child starts). */
  mintedRunId: string | null = null;
  /** Read back from a durable tree's record, not awaited. */
  replayed = false;
  outcome: DelegationOutcome | undefined = undefined;
  refusal: Refusal | undefined = undefined;

  /** The child's name as the model gave it, capped (see shownName): it goes into the span, the events and messages. */
  readonly name: string;

  /** What the child's tree spent, once known: its record carries it. */
  spent: { readonly usage: Usage; readonly costUsd: number | null } | undefined = undefined;
  /** The child's validated output (a sub-agent with an outputType that answered). */
  output: unknown = undefined;

  constructor(
    readonly ctx: DelegationCallContext,
    name: string,
  ) {
    this.name = shownName(name);
  }

  /** The child's run id is minted: its span names it from now on. */
  minted(runId: string): void {
    this.mintedRunId = runId;
    writeDelegationSpan(this.ctx.span, this);
  }

  /** The child's result was read back from its record (a durable tree going on). */
  readBack(): void {
    this.replayed = true;
    writeDelegationSpan(this.ctx.span, this);
  }

  /** The child's tree suspended: the call waits with it (an outcome of its own, not an error). */
  suspend<P>(paused: P): P {
    this.record('suspended', undefined);
    return paused;
  }

  finish(result: string | Refusal): string {
    const text = typeof result === 'string' ? result : result.message;
    this.record(typeof result === 'string' ? 'delegated' : result.outcome, typeof result === 'string' ? undefined : result);
    return text;
  }

  private record(outcome: DelegationOutcome, result: Refusal | undefined): void {
    if (this.finished) return;
    this.finished = true;
    this.outcome = outcome;
    this.refusal = result;
    writeDelegationSpan(this.ctx.span, this);
    // A name the roster does not hold came from the model, and could be anything: as a metric
    // label it would make a new series per hallucination. The span keeps the real name.
    const label = outcome === 'unknown_child' ? '(unknown)' : this.name === '' ? '(invalid)' : this.name;
    this.ctx.account?.delegation(label, outcome);
    this.ctx.events?.emit({ type: 'delegation.finished', child: this.name, childRunId: this.childRunId, outcome });
    this.ctx.delegations?.set(this.ctx.toolCallId, this.recordOf(outcome));
    if (result !== undefined) this.ctx.logger.debug({ child: this.name, outcome }, 'delegation did not complete');
  }

  private recordOf(outcome: DelegationOutcome): DelegationRecord {
    const record: { -readonly [K in keyof DelegationRecord]: DelegationRecord[K] } = {
      child: this.name,
      childRunId: this.childRunId,
      outcome,
      usage: this.spent?.usage ?? emptyUsage(),
      costUsd: this.spent === undefined ? 0 : this.spent.costUsd,
    };
    if (this.output !== undefined && outcome === 'delegated') record.output = this.output;
    return record;
  }
}

import { SpanStatusCode, type Span } from '@opentelemetry/api';
import { ATTR, type DelegationOutcome } from '../observability/attributes.js';

/** What a run_agent call knows of itself, as its span shows it. */
export interface DelegationSpanData {
  /** The child's name as the model gave it (capped); '' when the call named none. */
  readonly name: string;
  /** The child's run id once minted; null before (or when the call never got that far). */
  readonly mintedRunId: string | null;
  /** The outcome, once the call ended; undefined while it runs. */
  readonly outcome: DelegationOutcome | undefined;
  /** Why the call did not delegate, when it did not: the error type and the text the model read. */
  readonly refusal: { readonly errorType: string; readonly message: string } | undefined;
  /** In a durable tree: the child's result was read back from its record, not awaited. */
  readonly replayed: boolean;
}

/**
 * What an `execute_tool run_agent` span adds to a tool span's attributes (DESIGN "Telemetry
 * names"), built from the call's data and nothing else: the one place a delegation span's
 * content is decided, whether the child ran now or was read back.
 */
export function delegationSpanContent(d: DelegationSpanData): Record<string, string | boolean> {
  const a: Record<string, string | boolean> = {};
  if (d.name !== '') a[ATTR.delegationChild] = d.name;
  if (d.mintedRunId !== null) a[ATTR.delegationChildRunId] = d.mintedRunId;
  if (d.outcome !== undefined) a[ATTR.delegationOutcome] = d.outcome;
  if (d.refusal !== undefined) a[ATTR.errorType] = d.refusal.errorType;
  if (d.replayed) a[ATTR.replayed] = true;
  return a;
}

/** Writes the call's content on its span (the one writer): again as the call learns more, so the span holds the latest. */
export function writeDelegationSpan(span: Span | undefined, d: DelegationSpanData): void {
  if (span === undefined || !span.isRecording()) return;
  span.setAttributes(delegationSpanContent(d));
  if (d.refusal !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: d.refusal.message });
}

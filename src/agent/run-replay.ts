import { trace, TraceFlags, type Span } from '@opentelemetry/api';
import { ATTR } from '../observability/attributes.js';
import type { Recorded, StepSpan } from '../run/run-driver.js';
import type { RunState } from './run-state.js';

/** What a driven run remembers of the steps it read back, to link its span to where they were made. */
export interface ReplayMarks {
  /** Run spans already linked: one per execution that recorded steps (a tree may be recovered twice). */
  readonly linked: Set<string>;
  /** The last step read back since the last step made fresh. */
  last: StepSpan | null;
}

/**
 * After each step of a driven run. A step read back marks the run recovered and links its span
 * to the run span those steps were recorded under (the execution that stopped); the first step
 * made fresh after steps read back links to the last of them: where that execution stopped.
 */
export function noteStep(run: RunState, recorded: Recorded<{ readonly span: StepSpan | null }>): void {
  const span = recorded.value.span;
  let marks = replays.get(run);
  if (recorded.replayed) {
    if (marks === undefined) {
      replays.set(run, (marks = { linked: new Set(), last: null }));
      if (run.span.isRecording()) run.span.setAttribute(ATTR.runRecovered, true);
    }
    if (span !== null) {
      if (!marks.linked.has(span.runSpanId)) {
        marks.linked.add(span.runSpanId);
        link(run.span, span.traceId, span.runSpanId);
      }
      marks.last = span;
    }
    return;
  }
  if (marks?.last) {
    link(run.span, marks.last.traceId, marks.last.spanId);
    marks.last = null;
  }
}

// Kept beside the run rather than on it: only a driven run that read steps back has any.
const replays = new WeakMap<RunState, ReplayMarks>();

/** Where a step's span is, for its record; null when no span is recorded (no SDK). */
export function stepSpan(run: RunState, span: Span): StepSpan | null {
  const sc = span.spanContext();
  if (!trace.isSpanContextValid(sc)) return null;
  return { traceId: sc.traceId, spanId: sc.spanId, runSpanId: run.span.spanContext().spanId };
}

function link(span: Span, traceId: string, spanId: string): void {
  if (span.isRecording()) span.addLink({ context: { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: true } });
}

import { ROOT_CONTEXT, trace, type Context } from '@opentelemetry/api';
import type { RunFrame } from '../run/run-frame.js';
import { rootSignal, type OwnedSignal } from '../core/signals.js';
import { frameFromData, type FrameData } from '../run/run-driver.js';
import type { SpanLink } from '../run/snapshot/run-snapshot.js';

/**
 * A run's frame opened from its recorded data, in whichever worker runs it: its place in the tree
 * as recorded, a signal of its own for its deadline, and the trace context it was started in
 * (so a recovered run's spans join the tree's trace). Nothing of the process that recorded it.
 */
export function openFrame(data: FrameData, parent: SpanLink | null): { frame: RunFrame; owned: OwnedSignal } {
  // Abortable: a cancel of its tree stops it here at once (tree-cancel.ts).
  const owned = rootSignal(undefined, data.deadline, true);
  // Recorded runs are placed through the child door only: each can be resumed.
  const frame = frameFromData(data, { signal: owned.signal, traceContext: contextUnder(parent), askUser: undefined, events: undefined });
  return { frame, owned };
}

/** A context whose parent span is the recorded one (a remote parent: it may be in another process, or gone). */
export function contextUnder(parent: SpanLink | null): Context {
  if (parent === null) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: parent.traceId, spanId: parent.spanId, traceFlags: parent.flags, isRemote: true });
}

/** The span context active where a caller started a tree, as data; null when there is none. */
export function spanLinkOf(context: Context): SpanLink | null {
  const sc = trace.getSpanContext(context);
  return sc !== undefined && trace.isSpanContextValid(sc) ? { traceId: sc.traceId, spanId: sc.spanId, flags: sc.traceFlags } : null;
}

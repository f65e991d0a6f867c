/**
 * Span records written as OTLP/JSON (an ExportTraceServiceRequest), the format `symfonic tree`
 * and the collector's file exporter read: what `demo --suspend` keeps of a tree's first stretch,
 * so the process that resumes it can draw the whole tree and `symfonic tree` can read it too.
 */
import type { SpanRecord } from '../trace/span-records.js';

type AnyValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string }
  | { doubleValue: number }
  | { arrayValue: { values: AnyValue[] } }
  | { kvlistValue: { values: KeyValue[] } };

interface KeyValue {
  key: string;
  value: AnyValue;
}

/** An attribute value as OTLP's AnyValue; undefined for what OTLP cannot hold (null, functions). */
function anyValue(v: unknown): AnyValue | undefined {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isSafeInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValue).filter((x): x is AnyValue => x !== undefined) } };
  if (typeof v === 'object' && v !== null) return { kvlistValue: { values: keyValues(v as Record<string, unknown>) } };
  return undefined;
}

function keyValues(attributes: Readonly<Record<string, unknown>>): KeyValue[] {
  const out: KeyValue[] = [];
  for (const [key, raw] of Object.entries(attributes)) {
    const value = anyValue(raw);
    if (value !== undefined) out.push({ key, value });
  }
  return out;
}

/** Milliseconds (to the microsecond, as span records hold them) as OTLP's nanoseconds string. */
const nanos = (ms: number): string => (BigInt(Math.round(ms * 1000)) * 1000n).toString();

const STATUS_CODE = { unset: 0, ok: 1, error: 2 } as const;

function otlpSpan(s: SpanRecord) {
  return {
    traceId: s.traceId,
    spanId: s.spanId,
    ...(s.parentSpanId !== undefined ? { parentSpanId: s.parentSpanId } : {}),
    name: s.name,
    startTimeUnixNano: nanos(s.startMs),
    endTimeUnixNano: nanos(s.endMs),
    attributes: keyValues(s.attributes),
    status: { code: STATUS_CODE[s.status] },
  };
}

/** One ExportTraceServiceRequest holding `spans`, one resourceSpans entry per distinct resource. */
export function toOtlpJson(spans: readonly SpanRecord[]): { resourceSpans: unknown[] } {
  const byResource = new Map<string, { resource: Readonly<Record<string, unknown>>; spans: SpanRecord[] }>();
  for (const s of spans) {
    const resource = s.resource ?? {};
    const key = JSON.stringify(resource);
    const group = byResource.get(key) ?? { resource, spans: [] };
    group.spans.push(s);
    byResource.set(key, group);
  }
  return {
    resourceSpans: [...byResource.values()].map((g) => ({
      resource: { attributes: keyValues(g.resource) },
      scopeSpans: [{ scope: { name: 'symfonic' }, spans: g.spans.map(otlpSpan) }],
    })),
  };
}

import { ATTR, OPERATION } from '../observability/attributes.js';

/**
 * A finished span reduced to what lineage needs. SDK ReadableSpans, OTLP/JSON export requests and
 * the OTLP JSON Jaeger's query API returns all become these, so the test kit and `symfonic tree`
 * read a tree one way, whichever side of the wire the spans were taken from.
 */
export interface SpanRecord {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  startMs: number;
  endMs: number;
  attributes: Readonly<Record<string, unknown>>;
  status: 'ok' | 'error' | 'unset';
  /** The resource's attributes (`service.name`, …), where the source carries them. */
  resource?: Readonly<Record<string, unknown>>;
}

/** The structural part of an SDK ReadableSpan that a SpanRecord is made from. */
export interface ReadableSpanLike {
  name: string;
  spanContext(): { traceId: string; spanId: string };
  parentSpanContext?: { spanId: string } | undefined;
  startTime: [number, number];
  endTime: [number, number];
  attributes: Record<string, unknown>;
  status: { code: number };
  resource?: { attributes: Record<string, unknown> };
}

/**
 * An OTLP/JSON traces document: an ExportTraceServiceRequest (`{ resourceSpans }`, what an SDK
 * sends and the collector's file exporter writes) or Jaeger's `/api/v3/traces` answer
 * (`{ result: { resourceSpans } }`).
 */
export type OtlpTraceDocument = { resourceSpans: readonly unknown[] } | { result: { resourceSpans: readonly unknown[] } };

/** Anything spans can be read from: finished spans or records, OTLP documents, or a list mixing them. */
export type SpanSource = OtlpTraceDocument | readonly (ReadableSpanLike | SpanRecord | OtlpTraceDocument)[];

const hrMs = (t: [number, number]): number => t[0] * 1e3 + t[1] / 1e6;

export function fromReadableSpan(s: ReadableSpanLike): SpanRecord {
  const sc = s.spanContext();
  const record: SpanRecord = {
    traceId: sc.traceId,
    spanId: sc.spanId,
    parentSpanId: s.parentSpanContext?.spanId,
    name: s.name,
    startMs: hrMs(s.startTime),
    endMs: hrMs(s.endTime),
    attributes: s.attributes,
    // SpanStatusCode: 0 unset, 1 ok, 2 error.
    status: s.status.code === 2 ? 'error' : s.status.code === 1 ? 'ok' : 'unset',
  };
  if (s.resource) record.resource = s.resource.attributes;
  return record;
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

function isReadableSpan(x: unknown): x is ReadableSpanLike {
  return isObject(x) && typeof x['spanContext'] === 'function';
}

/** The resourceSpans of an OTLP document, or null when `x` is not one. */
function resourceSpansOf(x: unknown): readonly unknown[] | null {
  if (!isObject(x)) return null;
  if (Array.isArray(x['resourceSpans'])) return x['resourceSpans'];
  const result = x['result'];
  if (isObject(result) && Array.isArray(result['resourceSpans'])) return result['resourceSpans'];
  return null;
}

export function toSpanRecords(source: SpanSource): SpanRecord[] {
  if (!Array.isArray(source)) {
    if (resourceSpansOf(source) === null) {
      throw new TypeError('expected spans: an array of ReadableSpans or SpanRecords, or an OTLP/JSON document ({ resourceSpans } or Jaeger\'s { result: { resourceSpans } })');
    }
    return fromOtlpJson(source);
  }
  const out: SpanRecord[] = [];
  for (const item of source as readonly unknown[]) {
    if (isReadableSpan(item)) out.push(fromReadableSpan(item));
    else if (resourceSpansOf(item) !== null) {
      // A loop, not push(...spans): a spread of a large export would pass the argument limit.
      for (const record of fromOtlpJson(item)) out.push(record);
    }
    else out.push(item as SpanRecord);
  }
  return out;
}

export function isRunSpan(s: SpanRecord): boolean {
  return s.attributes[ATTR.operationName] === OPERATION.invokeAgent && typeof s.attributes[ATTR.runId] === 'string';
}

export function isDelegationSpan(s: SpanRecord): boolean {
  return s.attributes[ATTR.operationName] === OPERATION.executeTool && s.attributes[ATTR.toolName] === 'run_agent';
}

interface OtlpSpan {
  traceId?: string;
  spanId?: string;
  parentSpanId?: string;
  name?: string;
  startTimeUnixNano?: string | number;
  endTimeUnixNano?: string | number;
  attributes?: OtlpKeyValue[];
  status?: { code?: number | string };
}

interface OtlpKeyValue {
  key: string;
  value?: OtlpAnyValue;
}

interface OtlpAnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number | string;
  boolValue?: boolean;
  bytesValue?: string;
  arrayValue?: { values?: OtlpAnyValue[] };
  kvlistValue?: { values?: OtlpKeyValue[] };
}

/**
 * OTLP/JSON traces (an ExportTraceServiceRequest, or Jaeger's `{ result: … }` wrapper) to span
 * records. Throws a TypeError naming the field when a span lacks its ids.
 */
export function fromOtlpJson(document: unknown): SpanRecord[] {
  const out: SpanRecord[] = [];
  const rs = resourceSpansOf(document);
  if (rs === null) return out;
  for (const r of rs as { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[]) {
    const resource = attributesOf(r.resource?.attributes);
    for (const ss of r.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) out.push(fromOtlpSpan(s, resource));
    }
  }
  return out;
}

function fromOtlpSpan(s: OtlpSpan, resource: Record<string, unknown>): SpanRecord {
  const what = `span "${s.name ?? '?'}"`;
  return {
    traceId: normaliseId(s.traceId, 16, `${what} traceId`),
    spanId: normaliseId(s.spanId, 8, `${what} spanId`),
    parentSpanId: s.parentSpanId ? normaliseId(s.parentSpanId, 8, `${what} parentSpanId`) : undefined,
    name: s.name ?? '',
    startMs: nanosToMs(s.startTimeUnixNano),
    endMs: nanosToMs(s.endTimeUnixNano),
    attributes: attributesOf(s.attributes),
    status: statusOf(s.status?.code),
    resource,
  };
}

/** Nanoseconds since the epoch, as a string (JSON cannot hold them exactly as a number) or a number. */
function nanosToMs(v: string | number | undefined): number {
  if (v === undefined || v === '') return 0;
  return Number(BigInt(typeof v === 'number' ? Math.trunc(v) : v) / 1000n) / 1000;
}

/** The enum as a number (OTLP/JSON) or by name (protobuf JSON with enum names). */
function statusOf(code: number | string | undefined): SpanRecord['status'] {
  if (code === 2 || code === 'STATUS_CODE_ERROR') return 'error';
  if (code === 1 || code === 'STATUS_CODE_OK') return 'ok';
  return 'unset';
}

function attributesOf(kvs: OtlpKeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of kvs ?? []) out[kv.key] = otlpValue(kv.value);
  return out;
}

function otlpValue(v: OtlpAnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return Number(v.doubleValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(otlpValue);
  if (v.kvlistValue) return attributesOf(v.kvlistValue.values);
  if (v.bytesValue !== undefined) return v.bytesValue;
  return undefined;
}

/**
 * OTLP/JSON ids are hex; protobuf's canonical JSON (and some writers) give base64. The length
 * decides which, since a base64 id can consist of hex digits only; either way, hex comes out.
 */
function normaliseId(id: string | undefined, bytes: number, what: string): string {
  if (typeof id !== 'string' || id === '') throw new TypeError(`${what} is missing`);
  if (id.length === bytes * 2 && /^[0-9a-f]+$/i.test(id)) return id.toLowerCase();
  const decoded = Buffer.from(id, 'base64');
  if (decoded.length !== bytes || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(id)) {
    throw new TypeError(`${what} "${id}" is neither ${bytes * 2} hex digits nor the base64 of ${bytes} bytes`);
  }
  return decoded.toString('hex');
}

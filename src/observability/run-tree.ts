import { ATTR, OPERATION } from './attributes.js';

/**
 * A finished span reduced to what lineage needs. Both an SDK ReadableSpan and an OTLP/JSON span
 * become one of these, so the test kit and the `symfonic tree` command read a tree one way.
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
}

export interface RunNode {
  agent: string;
  runId: string;
  parentRunId: string | null;
  rootRunId: string;
  depth: number;
  tenantId: string | null;
  status: 'ok' | 'error';
  usage: { inputTokens: number; outputTokens: number };
  totalUsage: { inputTokens: number; outputTokens: number };
  delegations: { child: string; outcome: string; childRunId: string | null }[];
  children: RunNode[];
}

/** A RunNode with the timing and cost a picture of the tree needs. */
export interface TimedRunNode extends RunNode {
  traceId: string;
  startMs: number;
  endMs: number;
  costUsd: number | null;
  totalCostUsd: number | null;
  children: TimedRunNode[];
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
}

const hrMs = (t: [number, number]): number => t[0] * 1e3 + t[1] / 1e6;

export function fromReadableSpan(s: ReadableSpanLike): SpanRecord {
  const sc = s.spanContext();
  return {
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
}

export function toSpanRecords(spans: readonly (ReadableSpanLike | SpanRecord)[]): SpanRecord[] {
  return spans.map((s) => ('spanContext' in s && typeof s.spanContext === 'function' ? fromReadableSpan(s as ReadableSpanLike) : (s as SpanRecord)));
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' && v !== '' ? Number(v) : 0);
const numOrNull = (v: unknown): number | null => (v === undefined ? null : num(v));

export function isRunSpan(s: SpanRecord): boolean {
  return s.attributes[ATTR.operationName] === OPERATION.invokeAgent && typeof s.attributes[ATTR.runId] === 'string';
}

function isDelegationSpan(s: SpanRecord): boolean {
  return s.attributes[ATTR.operationName] === OPERATION.executeTool && s.attributes[ATTR.toolName] === 'run_agent';
}

/**
 * The delegation forest the spans describe: one node per run (its invoke_agent span), children
 * in start order. A run whose parent is missing from the spans is returned as a root too, so
 * nothing is dropped; `checkLineage` reports it.
 */
export function buildRunTree(input: readonly (ReadableSpanLike | SpanRecord)[]): TimedRunNode[] {
  const spans = toSpanRecords(input);
  const nodes = new Map<string, TimedRunNode>();
  for (const s of spans) {
    if (!isRunSpan(s)) continue;
    const a = s.attributes;
    nodes.set(a[ATTR.runId] as string, {
      agent: str(a[ATTR.agentName]) ?? s.name.replace(/^invoke_agent /, ''),
      runId: a[ATTR.runId] as string,
      parentRunId: str(a[ATTR.parentRunId]),
      rootRunId: str(a[ATTR.rootRunId]) ?? (a[ATTR.runId] as string),
      depth: num(a[ATTR.agentDepth]),
      tenantId: str(a[ATTR.tenantId]),
      status: s.status === 'error' ? 'error' : 'ok',
      usage: { inputTokens: num(a[ATTR.inputTokens]), outputTokens: num(a[ATTR.outputTokens]) },
      totalUsage: { inputTokens: num(a[ATTR.totalInputTokens]), outputTokens: num(a[ATTR.totalOutputTokens]) },
      delegations: [],
      children: [],
      traceId: s.traceId,
      startMs: s.startMs,
      endMs: s.endMs,
      costUsd: numOrNull(a[ATTR.costUsd]),
      totalCostUsd: numOrNull(a[ATTR.totalCostUsd]),
    });
  }
  // Call order: the run's tool-call sequence number. Sibling spans often start in the same
  // millisecond, so start time only breaks ties for spans written without one.
  const seqOf = (s: SpanRecord): number => (typeof s.attributes[ATTR.toolCallSeq] === 'number' ? (s.attributes[ATTR.toolCallSeq] as number) : Infinity);
  const delegationSpans = spans.filter(isDelegationSpan).sort((x, y) => seqOf(x) - seqOf(y) || x.startMs - y.startMs);
  for (const d of delegationSpans) {
    const owner = nodes.get(d.attributes[ATTR.runId] as string);
    owner?.delegations.push({
      child: str(d.attributes[ATTR.delegationChild]) ?? '',
      outcome: str(d.attributes[ATTR.delegationOutcome]) ?? 'unknown',
      childRunId: str(d.attributes[ATTR.delegationChildRunId]),
    });
  }
  const roots: TimedRunNode[] = [];
  for (const n of [...nodes.values()].sort((x, y) => x.startMs - y.startMs)) {
    const parent = n.parentRunId === null ? undefined : nodes.get(n.parentRunId);
    if (parent) parent.children.push(n);
    else roots.push(n);
  }
  // Children in the order their parent delegated to them, as the model asked.
  for (const n of nodes.values()) {
    if (n.children.length < 2) continue;
    const order = new Map(n.delegations.map((d, i) => [d.childRunId, i]));
    n.children.sort((x, y) => (order.get(x.runId) ?? Infinity) - (order.get(y.runId) ?? Infinity) || x.startMs - y.startMs);
  }
  return roots;
}

/** The RunNode shape of the public contract, without timing fields. */
export function publicRunNode(n: TimedRunNode): RunNode {
  return {
    agent: n.agent,
    runId: n.runId,
    parentRunId: n.parentRunId,
    rootRunId: n.rootRunId,
    depth: n.depth,
    tenantId: n.tenantId,
    status: n.status,
    usage: n.usage,
    totalUsage: n.totalUsage,
    delegations: n.delegations,
    children: n.children.map(publicRunNode),
  };
}

export interface LineageProblem {
  invariant: string;
  message: string;
}

/**
 * Every way the spans' lineage can disagree with itself. Each problem names its invariant and
 * the runs involved, so a failing test says what broke rather than that something did.
 */
export function checkLineage(input: readonly (ReadableSpanLike | SpanRecord)[]): LineageProblem[] {
  const spans = toSpanRecords(input);
  const problems: LineageProblem[] = [];
  const add = (invariant: string, message: string) => problems.push({ invariant, message });
  const bySpanId = new Map(spans.map((s) => [s.spanId, s]));
  const runSpans = spans.filter(isRunSpan);
  const runs = new Map<string, SpanRecord>();
  for (const s of runSpans) {
    const id = s.attributes[ATTR.runId] as string;
    if (runs.has(id)) add('unique-run-ids', `run id ${id} is used by two runs ("${runs.get(id)!.name}" and "${s.name}")`);
    else runs.set(id, s);
  }
  const rootsByTrace = new Map<string, string[]>();
  for (const s of runSpans) {
    if (s.attributes[ATTR.parentRunId] === undefined) {
      const list = rootsByTrace.get(s.traceId) ?? [];
      list.push(s.attributes[ATTR.runId] as string);
      rootsByTrace.set(s.traceId, list);
    }
  }
  const traces = new Set(runSpans.map((s) => s.traceId));
  for (const t of traces) {
    const roots = rootsByTrace.get(t) ?? [];
    if (roots.length !== 1) add('one-root-per-trace', `trace ${t} has ${roots.length} root runs${roots.length ? ` (${roots.join(', ')})` : ''}; a trace holds exactly one`);
  }
  /** The nearest invoke_agent span above `s`, following span parentage. */
  const enclosingRun = (s: SpanRecord): SpanRecord | undefined => {
    let p = s.parentSpanId ? bySpanId.get(s.parentSpanId) : undefined;
    while (p && !isRunSpan(p)) p = p.parentSpanId ? bySpanId.get(p.parentSpanId) : undefined;
    return p;
  };
  for (const s of runSpans) {
    const a = s.attributes;
    const id = a[ATTR.runId] as string;
    const parentId = str(a[ATTR.parentRunId]);
    const rootId = str(a[ATTR.rootRunId]);
    const depth = num(a[ATTR.agentDepth]);
    if (parentId === null) {
      if (rootId !== id) add('single-root-run-id', `root run ${id} has root_run_id ${rootId}; a root's root_run_id is its own run_id`);
      continue;
    }
    if (parentId === id) add('parent-run-id', `run ${id} names itself as its parent`);
    const parent = runs.get(parentId);
    if (!parent) {
      add('parent-run-id', `run ${id} names parent run ${parentId}, which is not among the spans`);
      continue;
    }
    const pa = parent.attributes;
    if (rootId !== str(pa[ATTR.rootRunId])) {
      add('single-root-run-id', `run ${id} has root_run_id ${rootId} but its parent ${parentId} has ${str(pa[ATTR.rootRunId])}`);
    }
    if (depth !== num(pa[ATTR.agentDepth]) + 1) {
      add('depth', `run ${id} is at depth ${depth} but its parent ${parentId} is at depth ${num(pa[ATTR.agentDepth])}; a child is one deeper`);
    }
    if (str(a[ATTR.tenantId]) !== str(pa[ATTR.tenantId])) {
      add('tenant', `run ${id} has tenant ${str(a[ATTR.tenantId])} but its parent ${parentId} has ${str(pa[ATTR.tenantId])}; scope is inherited unchanged`);
    }
    const above = enclosingRun(s);
    if (above !== parent) {
      add(
        'span-parentage',
        `run ${id}'s span sits under ${above ? `run ${String(above.attributes[ATTR.runId])}` : 'no run'} in the trace, but its parent_run_id is ${parentId}`,
      );
    }
  }
  for (const s of spans) {
    if (isRunSpan(s) || typeof s.attributes[ATTR.runId] !== 'string') continue;
    const owner = enclosingRun(s);
    const ownerId = owner ? str(owner.attributes[ATTR.runId]) : null;
    if (ownerId !== s.attributes[ATTR.runId]) {
      add('span-lineage', `span "${s.name}" carries run_id ${String(s.attributes[ATTR.runId])} but sits under run ${ownerId ?? '(none)'}`);
    } else if (owner && (owner.attributes[ATTR.rootRunId] !== s.attributes[ATTR.rootRunId] || owner.attributes[ATTR.tenantId] !== s.attributes[ATTR.tenantId])) {
      add('span-lineage', `span "${s.name}" of run ${ownerId} carries a root_run_id or tenant_id other than its run's`);
    }
  }
  return problems;
}

/** OTLP/JSON (an ExportTraceServiceRequest) to span records. */
export function fromOtlpJson(request: unknown): SpanRecord[] {
  const out: SpanRecord[] = [];
  const rs = (request as { resourceSpans?: unknown[] } | null)?.resourceSpans;
  if (!Array.isArray(rs)) return out;
  for (const r of rs as { scopeSpans?: { spans?: OtlpSpan[] }[] }[]) {
    for (const ss of r.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const attributes: Record<string, unknown> = {};
        for (const kv of s.attributes ?? []) attributes[kv.key] = otlpValue(kv.value);
        out.push({
          traceId: normaliseId(s.traceId),
          spanId: normaliseId(s.spanId),
          parentSpanId: s.parentSpanId ? normaliseId(s.parentSpanId) : undefined,
          name: s.name ?? '',
          startMs: Number(BigInt(s.startTimeUnixNano ?? 0) / 1000n) / 1000,
          endMs: Number(BigInt(s.endTimeUnixNano ?? 0) / 1000n) / 1000,
          attributes,
          status: s.status?.code === 2 || s.status?.code === 'STATUS_CODE_ERROR' ? 'error' : s.status?.code === 1 ? 'ok' : 'unset',
        });
      }
    }
  }
  return out;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name?: string;
  startTimeUnixNano?: string | number;
  endTimeUnixNano?: string | number;
  attributes?: { key: string; value: OtlpAnyValue }[];
  status?: { code?: number | string };
}

type OtlpAnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpAnyValue[] };
};

function otlpValue(v: OtlpAnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(otlpValue);
  return undefined;
}

/** OTLP/JSON ids are hex; some writers emit base64. Either way, hex comes out. */
function normaliseId(id: string): string {
  if (/^[0-9a-f]+$/i.test(id)) return id.toLowerCase();
  return Buffer.from(id, 'base64').toString('hex');
}

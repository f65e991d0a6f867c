import { ATTR } from '../observability/attributes.js';
import { isDelegationSpan, isRunSpan, toSpanRecords, type SpanRecord, type SpanSource } from './span-records.js';

// The names the test kit, the CLI and the tests have always imported from here.
export { checkLineage, type LineageProblem } from './lineage-check.js';
export { fromOtlpJson, fromReadableSpan, isRunSpan, toSpanRecords, type OtlpTraceDocument, type ReadableSpanLike, type SpanRecord, type SpanSource } from './span-records.js';

/*
 * The run tree: spans (parsed by span-records.ts) grouped into the delegation forest they
 * describe. Lineage checks over the same spans live in lineage-check.ts.
 */

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
  /** Not ended: still running (a live picture), or paused by an interruption until resumed. */
  state?: 'running' | 'paused';
  /**
   * The stretches a run that suspended and was resumed spent waiting (from its suspended span's
   * end to its resumed span's start), in order: a wait for a decision is not work.
   */
  pauses?: readonly { startMs: number; endMs: number }[];
  children: TimedRunNode[];
}

/** The run status a suspended run's invoke_agent span carries (it is not an error). */
const SUSPENDED = 'suspended';

/**
 * Every node of a tree, parents before their children, in child order. A loop, not recursion:
 * a delegation chain thousands deep is a tree like any other.
 */
export function runsOf<T extends { readonly children: readonly T[] }>(root: T): T[] {
  const out: T[] = [];
  const stack: T[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    out.push(n);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
  return out;
}

/** A copy of a tree, each node made by `make` from the node and its children's copies (children first, no recursion). */
export function mapTree<T extends { readonly children: readonly T[] }, U>(root: T, make: (node: T, children: U[]) => U): U {
  const made = new Map<T, U>();
  const nodes = runsOf(root);
  for (let i = nodes.length - 1; i >= 0; i--) {
    const n = nodes[i]!;
    made.set(n, make(n, n.children.map((c) => made.get(c)!)));
  }
  return made.get(root)!;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' && v !== '' ? Number(v) : 0);
const numOrNull = (v: unknown): number | null => (v === undefined ? null : num(v));

/**
 * The delegation forest the spans describe: one node per run (its invoke_agent span), children
 * in start order. A run whose parent is missing from the spans is returned as a root too, so
 * nothing is dropped; `checkLineage` reports it.
 */
export function buildRunTree(input: SpanSource): TimedRunNode[] {
  const spans = toSpanRecords(input);
  const nodes = new Map<string, TimedRunNode>();
  for (const s of spans) {
    if (!isRunSpan(s)) continue;
    const node = runNodeOf(s);
    const earlier = nodes.get(node.runId);
    nodes.set(node.runId, earlier === undefined ? node : stretched(earlier, node));
  }
  // Call order: the run's tool-call sequence number. Sibling spans often start in the same
  // millisecond, so start time only breaks ties for spans written without one.
  const seqOf = (s: SpanRecord): number => (typeof s.attributes[ATTR.toolCallSeq] === 'number' ? (s.attributes[ATTR.toolCallSeq] as number) : Infinity);
  const delegationSpans = spans.filter(isDelegationSpan).sort((x, y) => seqOf(x) - seqOf(y) || x.startMs - y.startMs);
  for (const d of delegationSpans) {
    const owner = nodes.get(d.attributes[ATTR.runId] as string);
    if (owner === undefined) continue;
    const record = {
      child: str(d.attributes[ATTR.delegationChild]) ?? '',
      outcome: str(d.attributes[ATTR.delegationOutcome]) ?? 'unknown',
      childRunId: str(d.attributes[ATTR.delegationChildRunId]),
    };
    // A resumed run calls its suspended child again: one delegation, its latest outcome.
    const again = record.childRunId === null ? undefined : owner.delegations.find((x) => x.childRunId === record.childRunId);
    if (again) again.outcome = record.outcome;
    else owner.delegations.push(record);
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

function runNodeOf(s: SpanRecord): TimedRunNode {
  const a = s.attributes;
  return {
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
    ...(a[ATTR.runStatus] === SUSPENDED ? { state: 'paused' as const } : {}),
  };
}

/**
 * One run of two spans: a run that suspended and was resumed has a span per stretch, under one
 * run id. It is drawn once, from its first start to its last end, with the figures and state of
 * its last stretch (a resumed run's figures continue from the snapshot), and the wait between the
 * stretches kept as a pause.
 */
function stretched(a: TimedRunNode, b: TimedRunNode): TimedRunNode {
  const [first, last] = a.endMs <= b.endMs ? [a, b] : [b, a];
  const wait = first.state === 'paused' && last.startMs > first.endMs ? [{ startMs: first.endMs, endMs: last.startMs }] : [];
  const pauses = [...(first.pauses ?? []), ...wait, ...(last.pauses ?? [])];
  return { ...last, startMs: Math.min(first.startMs, last.startMs), ...(pauses.length > 0 ? { pauses } : {}) };
}

/** The RunNode shape of the public contract, without timing fields. */
export function publicRunNode(root: TimedRunNode): RunNode {
  return mapTree<TimedRunNode, RunNode>(root, (n, children) => ({
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
    children,
  }));
}

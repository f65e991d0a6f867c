import { ATTR } from '../observability/attributes.js';
import { isRunSpan, toSpanRecords, type SpanRecord, type SpanSource } from './span-records.js';

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' && v !== '' ? Number(v) : 0);

export interface LineageProblem {
  invariant: string;
  message: string;
}

/**
 * Every way the spans' lineage can disagree with itself. Each problem names its invariant and
 * the runs involved, so a failing test says what broke rather than that something did.
 */
export function checkLineage(input: SpanSource): LineageProblem[] {
  const spans = toSpanRecords(input);
  const problems: LineageProblem[] = [];
  const add = (invariant: string, message: string) => problems.push({ invariant, message });
  const bySpanId = new Map(spans.map((s) => [s.spanId, s]));
  const runSpans = spans.filter(isRunSpan);
  const runs = new Map<string, SpanRecord>();
  // A run that suspended and was resumed has a span per stretch under its one run id: every
  // stretch but the last says so (symfonic.run.status=suspended). Any other repeat is two runs.
  const stretches = new Map<string, SpanRecord[]>();
  for (const s of runSpans) {
    const id = s.attributes[ATTR.runId] as string;
    stretches.set(id, [...(stretches.get(id) ?? []), s]);
    if (!runs.has(id)) runs.set(id, s);
  }
  for (const [id, list] of stretches) {
    if (list.length < 2) continue;
    const byEnd = [...list].sort((x, y) => x.endMs - y.endMs);
    const unmarked = byEnd.slice(0, -1).find((s) => s.attributes[ATTR.runStatus] !== 'suspended');
    const renamed = list.find((s) => s.name !== list[0]!.name);
    if (unmarked || renamed) {
      const other = renamed ?? unmarked!;
      add('unique-run-ids', `run id ${id} is used by two runs ("${list[0]!.name}" and "${other.name}"); only a resumed run repeats its id, on spans after one marked suspended`);
    }
  }
  const rootsByTrace = new Map<string, Set<string>>();
  for (const s of runSpans) {
    if (s.attributes[ATTR.parentRunId] === undefined) {
      const set = rootsByTrace.get(s.traceId) ?? new Set<string>();
      set.add(s.attributes[ATTR.runId] as string);
      rootsByTrace.set(s.traceId, set);
    }
  }
  const traces = new Set(runSpans.map((s) => s.traceId));
  for (const t of traces) {
    const roots = [...(rootsByTrace.get(t) ?? [])];
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
    // Compared by run id: a resumed parent's stretches are one run.
    if (above === undefined || str(above.attributes[ATTR.runId]) !== parentId) {
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

/**
 * A durable tree's root frame: a root of its own by default, or placed under a caller's run
 * (`lineage`) as an in-process served run is — the caller's root, its run the parent, one deeper,
 * the ceiling it sent. A served task's placement (the wire's, served-frame.ts) becomes that
 * lineage; a caller outside any tree leaves the tree a root. Lineage options are checked.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/index.js';
import { readRunOptions } from '../../src/durable/durable-options.js';
import { rootFrameData } from '../../src/durable/root-frame.js';
import { servedLineage } from '../../src/remote/durable-runner.js';

describe('rootFrameData', () => {
  it('makes a tree without lineage a root of its own, its run id its root, depth 0', () => {
    expect(rootFrameData('tree-1', { scope: { tenantId: 'acme' }, deadline: 5_000 })).toEqual({ runId: 'tree-1', rootRunId: 'tree-1', parentRunId: null, depth: 0, scope: { tenantId: 'acme' }, deadline: 5_000 });
  });

  it('places a served task under the caller the wire names: its root, its run as parent, one deeper, its ceiling', () => {
    // As served-frame.ts reads baggage root_run_id=caller-root, parent_run_id=caller-run, agent_depth=2, max_agent_depth=6.
    const wire = { runId: 'tree-2', rootRunId: 'caller-root', parentRunId: 'caller-run', agentDepth: 3, maxAgentDepth: 6, scope: { tenantId: 'acme' } };
    const lineage = servedLineage(wire);
    expect(lineage).toEqual({ rootRunId: 'caller-root', parentRunId: 'caller-run', depth: 3, maxDepth: 6 });
    expect(rootFrameData('tree-2', { scope: wire.scope, lineage })).toEqual({ runId: 'tree-2', rootRunId: 'caller-root', parentRunId: 'caller-run', depth: 3, maxDepth: 6, scope: { tenantId: 'acme' } });
  });

  it('leaves a task whose caller is in no tree a root: no lineage', () => {
    expect(servedLineage({ runId: 'tree-3', scope: { tenantId: 'acme' } })).toBeUndefined();
  });
});

describe('durable run options: lineage', () => {
  const ok = { rootRunId: 'caller-root', parentRunId: 'caller-run', depth: 1 };
  it('takes a lineage, and refuses one with unknown keys, a depth of 0, a bad id, or its parent as the run id', () => {
    expect(readRunOptions('run', { runId: 'tree-1', lineage: ok })).toEqual({ runId: 'tree-1', lineage: ok });
    expect(() => readRunOptions('run', { lineage: { ...ok, tenant: 'x' } })).toThrow(/Unrecognized key: "tenant"[\s\S]*lineage/);
    expect(() => readRunOptions('run', { lineage: { ...ok, depth: 0 } })).toThrow(/at least one deeper than its root/);
    expect(() => readRunOptions('run', { lineage: { ...ok, parentRunId: 'has space' } })).toThrow(/must be an id of 1–128/);
    expect(() => readRunOptions('run', { lineage: { rootRunId: 'r', depth: 1 } })).toThrow(/parentRunId/);
    expect(() => readRunOptions('run', { runId: 'caller-run', lineage: ok })).toThrow(ConfigurationError);
    expect(() => readRunOptions('run', { runId: 'caller-run', lineage: ok })).toThrow(/runId and lineage.parentRunId are both "caller-run": a run never runs under its parent's id/);
  });

  it('takes the depth the wire gives its deepest caller (1000) plus one, as a run placed in process does', () => {
    const deep = { rootRunId: 'caller-root', parentRunId: 'caller-run', depth: 1001, maxDepth: 1000 };
    expect(readRunOptions('run', { lineage: deep })).toEqual({ lineage: deep });
    expect(rootFrameData('tree-1', { scope: { tenantId: 'acme' }, lineage: deep })).toMatchObject({ depth: 1001, rootRunId: 'caller-root' });
  });

  it('shows the lineage example only where the lineage is what is wrong', () => {
    expect(() => readRunOptions('run', { runId: 'has space' })).toThrow(/runId[\s\S]*Example: durable\.run\('planner', task, \{ scope: \{ tenantId: 'acme' \}, runId: 'order-17' \}\)/);
    expect(() => readRunOptions('run', { runId: 'has space' })).not.toThrow(/lineage: \{/);
    expect(() => readRunOptions('run', { lineage: { ...ok, depth: 0 } })).toThrow(/lineage: \{ rootRunId: callerRootRunId/);
  });
});

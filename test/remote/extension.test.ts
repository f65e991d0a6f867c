/** symfonic's usage-lineage extension: activated per request, and nothing from the wire taken as it came. */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEmitter, RunEventBody, RunEventSink } from '../../src/run/run-event.js';
import { frameFrom, type RunFrame } from '../../src/run/run-frame.js';
import { RemoteEvents } from '../../src/remote/remote-events.js';
import { USAGE_LINEAGE_EXTENSION } from '../../src/remote/index.js';
import { recordEachTest } from '../support/per-test.js';
import { baggage, ext, post, sendMessageBody, serveLeaf, type Served } from './helpers.js';

const rec = recordEachTest();
const open: Served[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.server.close()));
});

describe('activation on the served side', () => {
  const lineage = baggage({ 'symfonic.parent_run_id': 'caller-1', 'symfonic.root_run_id': 'root-1', 'symfonic.agent_depth': 0, 'symfonic.run_id': 'child-1' });

  it('reads the lineage baggage, reports usage and echoes A2A-Extensions only for a request that activates it', async () => {
    const leaf = await serveLeaf('researcher');
    open.push(leaf);
    const off = await post(leaf.server.url, sendMessageBody('find'), { baggage: lineage, 'a2a-extensions': '' });
    expect(off.headers.get('a2a-extensions')).toBeNull();
    expect(off.json.result.task.metadata).toBeUndefined();
    expect(rec.tree().find((n) => n.agent === 'researcher')).toMatchObject({ parentRunId: null, depth: 0, tenantId: 'acme' });
    rec.reset();
    const on = await post(leaf.server.url, sendMessageBody('find'), { baggage: lineage });
    expect(on.headers.get('a2a-extensions')).toBe(USAGE_LINEAGE_EXTENSION);
    expect(ext(on.json.result.task.metadata).usage).toMatchObject({ runId: 'child-1', totalUsage: { inputTokens: 40, outputTokens: 4 } });
    expect(rec.tree().find((n) => n.agent === 'researcher')).toMatchObject({ runId: 'child-1', parentRunId: 'caller-1', rootRunId: 'root-1', depth: 1 });
  });
});

/** A sink that records what each opened run emits. */
function recordingSink(): RunEventSink & { log: { runId: string; parentRunId: string | null; depth: number; agent: string; body: RunEventBody }[] } {
  const log: { runId: string; parentRunId: string | null; depth: number; agent: string; body: RunEventBody }[] = [];
  return {
    log,
    open(frame: RunFrame, agent: string): RunEmitter {
      const emit = (body: RunEventBody) => log.push({ runId: frame.runId, parentRunId: frame.parentRunId, depth: frame.depth, agent, body });
      emit({ type: 'run.started' });
      return { emit };
    },
  };
}

describe("remote run events into the caller's sink", () => {
  const frame = frameFrom({ runId: 'child-1', rootRunId: 'root-1', parentRunId: 'caller-1', depth: 1 });
  const ev = (o: object) => ({ rootRunId: 'root-1', agent: 'hub', ...o });

  it('opens the served root where the call minted it and its children below it, at depths this tree computes', () => {
    const sink = recordingSink();
    const events = new RemoteEvents(sink, frame);
    events.take([
      ev({ type: 'run.started', runId: 'child-1', parentRunId: 'caller-1', depth: 0 }),
      ev({ type: 'run.started', runId: 'leaf-1', parentRunId: 'child-1', depth: 99, agent: 'leaf' }),
      ev({ type: 'text.delta', runId: 'leaf-1', delta: 'hi' }),
      ev({ type: 'run.finished', runId: 'leaf-1', usage: { inputTokens: 1, outputTokens: 1 }, totalUsage: { inputTokens: 1, outputTokens: 1 }, costUsd: null, totalCostUsd: null }),
    ]);
    expect(sink.log.map((l) => [l.runId, l.parentRunId, l.depth, l.agent, l.body.type])).toEqual([
      ['child-1', 'caller-1', 1, 'hub', 'run.started'],
      ['leaf-1', 'child-1', 2, 'leaf', 'run.started'],
      ['leaf-1', 'child-1', 2, 'leaf', 'text.delta'],
      ['leaf-1', 'child-1', 2, 'leaf', 'run.finished'],
    ]);
  });

  it('drops what does not fit: another root, an unknown parent, a run never started, a forged body, anything after a run ended', () => {
    const sink = recordingSink();
    const events = new RemoteEvents(sink, frame);
    events.take([
      ev({ type: 'run.started', runId: 'other', parentRunId: 'caller-1', rootRunId: 'another-root' }),
      ev({ type: 'run.started', runId: 'child-2', parentRunId: 'caller-1' }),
      ev({ type: 'run.started', runId: 'orphan', parentRunId: 'nobody' }),
      ev({ type: 'text.delta', runId: 'never-started', delta: 'x' }),
      ev({ type: 'run.started', runId: 'child-1', parentRunId: 'caller-1' }),
      ev({ type: 'model.finished', runId: 'child-1', usage: { inputTokens: -1, outputTokens: 2 }, costUsd: 0 }),
      ev({ type: 'delegation.finished', runId: 'child-1', child: 'x', childRunId: null, outcome: 'made_up' }),
      ev({ type: 'secret.event', runId: 'child-1' }),
      ev({ type: 'run.failed', runId: 'child-1', errorType: 'Error', message: 'key sk-abcdefghijklmnop leaked' }),
      ev({ type: 'text.delta', runId: 'child-1', delta: 'late' }),
      'not an object',
    ]);
    expect(sink.log.map((l) => [l.runId, l.body.type])).toEqual([
      ['child-1', 'run.started'],
      ['child-1', 'run.failed'],
    ]);
    expect((sink.log[1]!.body as { message: string }).message).not.toMatch(/sk-abcdef/);
  });

  it('ends every remote run still open when the call ends, so the caller never waits on them', () => {
    const sink = recordingSink();
    const events = new RemoteEvents(sink, frame);
    events.take([ev({ type: 'run.started', runId: 'child-1', parentRunId: 'caller-1' })]);
    events.close('the call was cancelled');
    expect(sink.log.at(-1)).toMatchObject({ runId: 'child-1', body: { type: 'run.failed', errorType: 'RemoteStreamEnded', message: 'the call was cancelled' } });
  });
});

/** A served tree's run events across the wire: into the caller's stream and onEvent, in the caller's order. */
import { afterEach, describe, expect, it } from 'vitest';
import { SubAgent, SymfonicAgent, type RunEvent } from '../../src/index.js';
import { serveAgent, USAGE_LINEAGE_EXTENSION, type ServedAgent } from '../../src/remote/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { foreignAgent } from './foreign.js';
import { bearer, collector, router, sendMessageBody, serveLeaf, TOKEN } from './helpers.js';

const rec = recordEachTest();
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** A served hub that delegates to a local leaf: a remote subtree two runs deep. */
async function servedHub(): Promise<ServedAgent> {
  const leaf = new SymfonicAgent({ name: 'leaf', modelProvider: scriptedModel(async () => ({ text: 'leaf says hi', chunks: ['leaf ', 'says ', 'hi'], usage: { inputTokens: 5, outputTokens: 3 } })) });
  const hubModel = scriptedModel(async (req) =>
    req.messages.at(-1)?.role === 'tool' ? { text: `hub: ${req.messages.at(-1)!.content}`, usage: { inputTokens: 9, outputTokens: 4 } } : { toolCalls: [{ name: 'run_agent', arguments: { name: 'leaf', task: 'greet' } }], usage: { inputTokens: 8, outputTokens: 2 } },
  );
  const hub = new SymfonicAgent({ name: 'hub', modelProvider: hubModel, subAgents: [new SubAgent({ name: 'leaf', agent: leaf, description: 'A leaf.' })] });
  const server = await serveAgent(hub, { authenticate: bearer() });
  open.push(server);
  return server;
}

const of = (events: RunEvent[], agent: string) => events.filter((e) => e.agent === agent);

describe("the caller's stream across the wire", () => {
  it("shows the remote runs with their own lineage, numbered in the caller's order", async () => {
    const server = await servedHub();
    const stream = router({ name: 'hub', url: server.url, description: 'A hub.' }).stream('q', { scope: { tenantId: 'acme' } });
    const events: RunEvent[] = [];
    for await (const e of stream) events.push(e);
    const reply = await stream.result;
    expect(reply.finalResponse).toBe('done [hub: leaf says hi]');
    const routerRun = reply.runId;
    const hubRun = of(events, 'hub')[0]!;
    const leafRun = of(events, 'leaf')[0]!;
    expect(hubRun).toMatchObject({ type: 'run.started', parentRunId: routerRun, rootRunId: routerRun, depth: 1 });
    expect(leafRun).toMatchObject({ type: 'run.started', parentRunId: hubRun.runId, rootRunId: routerRun, depth: 2 });
    expect(of(events, 'hub').map((e) => e.type)).toEqual(['run.started', 'model.started', 'model.finished', 'tool.started', 'delegation.started', 'delegation.finished', 'tool.finished', 'model.started', 'text.delta', 'model.finished', 'run.finished']);
    expect(of(events, 'leaf').filter((e) => e.type === 'text.delta').map((e) => (e as { delta: string }).delta)).toEqual(['leaf ', 'says ', 'hi']);
    // The caller's numbering, one sequence for the whole tree; the remote runs between the delegation's start and finish.
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const start = events.findIndex((e) => e.type === 'delegation.started' && e.runId === routerRun);
    const finish = events.findIndex((e) => e.type === 'delegation.finished' && e.runId === routerRun);
    const remote = events.flatMap((e, i) => (e.agent === 'hub' || e.agent === 'leaf' ? [i] : []));
    expect(Math.min(...remote)).toBeGreaterThan(start);
    expect(Math.max(...remote)).toBeLessThan(finish);
    expect(of(events, 'hub').at(-1)).toMatchObject({ type: 'run.finished', totalUsage: { inputTokens: 22, outputTokens: 9 } });
    // The events name the same runs the trace does.
    expect(rec.tree(routerRun)!.children[0]!.runId).toBe(hubRun.runId);
  });

  it('reaches onEvent too, and nothing is asked of the remote when nobody listens', async () => {
    const agent = await foreignAgent({ streaming: true, extensions: [USAGE_LINEAGE_EXTENSION] });
    open.push(agent);
    const seen: RunEvent[] = [];
    await router({ name: 'geo', url: agent.url, description: 'd' }).run('q', { scope: { tenantId: 'acme' } });
    await router({ name: 'geo', url: agent.url, description: 'd' }).run('q', { scope: { tenantId: 'acme' }, onEvent: (e) => seen.push(e) });
    expect(agent.requests.map((r) => r.params.metadata)).toEqual([undefined, { [USAGE_LINEAGE_EXTENSION]: { events: true } }]);
    expect(seen.some((e) => e.type === 'delegation.finished')).toBe(true);

    const server = await servedHub();
    const heard: RunEvent[] = [];
    await router({ name: 'hub', url: server.url, description: 'A hub.' }, { collector: collector() }).run('q', { scope: { tenantId: 'acme' }, onEvent: (e) => heard.push(e) });
    expect(of(heard, 'leaf').map((e) => e.type)).toContain('run.finished');
  });

  it('falls back to one answer when the caller says never to stream', async () => {
    const server = await servedHub();
    const events: RunEvent[] = [];
    const reply = await router({ name: 'hub', url: server.url, description: 'A hub.', stream: false }).run('q', { scope: { tenantId: 'acme' }, onEvent: (e) => events.push(e) });
    expect(reply.finalResponse).toBe('done [hub: leaf says hi]');
    expect(of(events, 'hub')).toEqual([]);
  });
});

describe('SendStreamingMessage on the wire', () => {
  async function streamed(url: string, headers: Record<string, string>, metadata?: object): Promise<any[]> {
    const body = JSON.parse(sendMessageBody('find', 3)) as Record<string, any>;
    body.method = 'SendStreamingMessage';
    if (metadata) body.params.metadata = metadata;
    const res = await fetch(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${TOKEN}`, ...headers } });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    return (await res.text())
      .split('\n\n')
      .filter((chunk) => chunk.startsWith('data: '))
      .map((chunk) => JSON.parse(chunk.slice(6)).result);
  }

  it('a plain streaming client hears the task submitted, then working, then its answer and completed', async () => {
    const leaf = await serveLeaf('researcher');
    open.push(leaf.server);
    const plain = await streamed(leaf.server.url, {});
    const states = plain.map((r) => r.task?.status.state ?? r.statusUpdate?.status.state ?? 'artifact');
    expect(states).toEqual(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'artifact', 'TASK_STATE_COMPLETED']);
    expect(plain[1].statusUpdate.metadata).toBeUndefined();
  });

  it('sends run events only to a caller that activated the extension and asked for them', async () => {
    const leaf = await serveLeaf('researcher');
    open.push(leaf.server);
    const ask = { [USAGE_LINEAGE_EXTENSION]: { events: true } };
    const plain = await streamed(leaf.server.url, {}, ask);
    expect(plain.map((r) => Object.keys(r)[0])).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
    expect(plain[3].statusUpdate.metadata).toBeUndefined();
    const unasked = await streamed(leaf.server.url, { 'a2a-extensions': USAGE_LINEAGE_EXTENSION });
    expect(unasked.map((r) => Object.keys(r)[0])).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
    const full = await streamed(leaf.server.url, { 'a2a-extensions': USAGE_LINEAGE_EXTENSION }, ask);
    const carried = full.filter((r) => r.statusUpdate?.metadata?.[USAGE_LINEAGE_EXTENSION]?.events).flatMap((r) => r.statusUpdate.metadata[USAGE_LINEAGE_EXTENSION].events);
    expect(carried.map((e: RunEvent) => e.type)).toEqual(['run.started', 'model.started', 'text.delta', 'model.finished', 'run.finished']);
    expect(full.at(-1).statusUpdate).toMatchObject({ status: { state: 'TASK_STATE_COMPLETED' }, metadata: { [USAGE_LINEAGE_EXTENSION]: { usage: { totalUsage: { inputTokens: 40, outputTokens: 4 } } } } });
  });
});

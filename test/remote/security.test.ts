import { afterEach, describe, expect, it } from 'vitest';
import { FrameworkConfig, SPAN_ATTRIBUTES as ATTR, SubAgent, SymfonicAgent } from '../../src/index.js';
import { serveAgent, type ServedAgent } from '../../src/remote/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { baggage, bearer, ext, post, router, sendMessageBody, serveLeaf, TOKEN } from './helpers.js';

const rec = recordEachTest();
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function leaf(opts: Parameters<typeof serveLeaf>[1] = {}): Promise<string> {
  const s = await serveLeaf('researcher', opts);
  open.push(s.server);
  return s.server.url;
}

const NO_STACK = /\n\s+at |\.ts:\d+|\.js:\d+/;

describe('who may call a served agent', () => {
  it('answers a request with the right token (the baseline the refusals below differ from)', async () => {
    const r = await post(await leaf(), sendMessageBody('find'));
    expect(r.status).toBe(200);
    expect(r.json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(r.json.result.task.artifacts[0].parts[0].text).toBe('researcher found it');
  });

  it('answers 401, with a message and no stack, when there are no credentials', async () => {
    const url = await leaf();
    const r = await post(url, sendMessageBody('find'), { authorization: '' });
    expect(r.status).toBe(401);
    expect(r.json.error.message).toMatch(/authentication required/);
    expect(r.text).not.toMatch(NO_STACK);
    const wrong = await post(url, sendMessageBody('find'), { authorization: 'Bearer guess' });
    expect(wrong.status).toBe(401);
  });

  it('answers 403 for a tenant in baggage the principal does not hold; baggage alone grants nothing', async () => {
    const url = await leaf();
    const r = await post(url, sendMessageBody('find'), { baggage: baggage({ 'symfonic.tenant_id': 'globex' }) });
    expect(r.status).toBe(403);
    expect(r.json.error.message).toBe('principal "router" may not act for tenant "globex"');
    const held = await post(url, sendMessageBody('find'), { baggage: baggage({ 'symfonic.tenant_id': 'acme' }) });
    expect(held.status).toBe(200);
  });

  it('runs an unnamed tenant only when the principal holds exactly one', async () => {
    const several = await leaf({ tenants: ['acme', 'globex'] });
    const r = await post(several, sendMessageBody('find'));
    expect(r.status).toBe(403);
    expect(r.json.error.message).toMatch(/several tenants/);
    await post(await leaf({ tenants: ['acme'] }), sendMessageBody('find'));
    const served = rec.tree().find((n) => n.agent === 'researcher');
    expect(served?.tenantId).toBe('acme');
  });

  it("reads as the caller's child_error when the served agent refuses it", async () => {
    const url = await leaf();
    const reply = await router({ name: 'researcher', url, description: 'Finds facts.', headers: { authorization: 'Bearer nope' } }).run('q', { scope: { tenantId: 'acme' } });
    expect(reply.finalResponse).toMatch(/Sub-agent "researcher" failed: RemoteAgentError: remote agent "researcher": .*authentication required/);
    expect(rec.tree(reply.runId)!.delegations[0]!.outcome).toBe('child_error');
    const forbidden = await router({ name: 'researcher', url, description: 'Finds facts.' }).run('q', { scope: { tenantId: 'globex' } });
    expect(forbidden.finalResponse).toMatch(/may not act for tenant "globex"/);
  });
});

describe('what a served agent reads', () => {
  it('answers 413 for a body over the limit, declared or streamed, without running anything', async () => {
    const agent = new SymfonicAgent({ name: 'small', modelProvider: scriptedModel(['never']) });
    const server = await serveAgent(agent, { authenticate: bearer(), maxBodyBytes: 1024 });
    open.push(server);
    const big = sendMessageBody('x'.repeat(2000));
    const declared = await post(server.url, big);
    expect(declared.status).toBe(413);
    expect(declared.json.error.message).toMatch(/larger than this agent accepts \(1024 bytes\)/);
    // No content-length: the body arrives in chunks and is cut off once it passes the limit.
    const chunks = new ReadableStream({
      start(c) {
        for (let i = 0; i < 4; i++) c.enqueue(new TextEncoder().encode(big.slice(i * 500, (i + 1) * 500)));
        c.close();
      },
    });
    const streamed = await fetch(server.url, { method: 'POST', body: chunks, duplex: 'half', headers: { authorization: `Bearer ${TOKEN}` } } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(rec.spans().filter((s) => s.name.startsWith('invoke_agent'))).toHaveLength(0);
  });

  it('sends a failed run back as a failed task carrying the message and never the stack', async () => {
    const url = await leaf({ answer: () => new Error('the index is offline') as never });
    const r = await post(url, sendMessageBody('find'));
    expect(r.status).toBe(200);
    expect(r.json.result.task.status.state).toBe('TASK_STATE_FAILED');
    expect(ext(r.json.result.task.metadata).failure).toMatchObject({ type: 'child_error', message: 'the index is offline' });
    expect(r.json.result.task.status.message.parts[0].text).toBe('the index is offline');
    expect(r.text).not.toMatch(NO_STACK);
  });

  it('refuses malformed lineage with 400 naming the entry', async () => {
    const url = await leaf();
    const r = await post(url, sendMessageBody('find'), { baggage: baggage({ 'symfonic.parent_run_id': 'p1', 'symfonic.agent_depth': 'deep', 'symfonic.root_run_id': 'r1' }) });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(/symfonic\.agent_depth must be a whole number/);
  });

  it('refuses a run id that is its parent\'s with 400, as run options refuse it (not served under a fresh id)', async () => {
    const url = await leaf();
    const r = await post(url, sendMessageBody('find'), { baggage: baggage({ 'symfonic.run_id': 'p1', 'symfonic.parent_run_id': 'p1', 'symfonic.agent_depth': 0, 'symfonic.root_run_id': 'r1' }) });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(/symfonic\.run_id and symfonic\.parent_run_id are both "p1": a run never runs under its parent's id/);
  });
});

describe('the depth ceiling across the wire', () => {
  /** A served hub whose own ceiling is 2, with one local child it always tries to delegate to. */
  async function hub(): Promise<ServedAgent> {
    const leafAgent = new SymfonicAgent({ name: 'leaf', modelProvider: scriptedModel(async () => 'leaf done') });
    const model = scriptedModel(async (req) => {
      const last = req.messages[req.messages.length - 1];
      return last?.role === 'tool' ? `hub: ${last.content}` : { toolCalls: [{ name: 'run_agent', arguments: { name: 'leaf', task: 'go' } }] };
    });
    const agent = new SymfonicAgent({
      name: 'hub',
      modelProvider: model,
      config: new FrameworkConfig({ agent: { maxAgentDepth: 2 } }),
      subAgents: [new SubAgent({ name: 'leaf', agent: leafAgent, description: 'A leaf.' })],
    });
    const server = await serveAgent(agent, { authenticate: bearer() });
    open.push(server);
    return server;
  }

  const lineage = (callerDepth: number, max: number) =>
    baggage({ 'symfonic.parent_run_id': 'caller-1', 'symfonic.root_run_id': 'root-1', 'symfonic.agent_depth': callerDepth, 'symfonic.max_agent_depth': max });

  async function outcomeAt(server: ServedAgent, callerDepth: number, max: number): Promise<string> {
    rec.reset();
    const r = await post(server.url, sendMessageBody('work'), { baggage: lineage(callerDepth, max) });
    expect(r.status).toBe(200);
    const span = rec.spans().find((s) => s.name === 'execute_tool run_agent' && s.attributes[ATTR.agentName] !== 'leaf');
    return String(span?.attributes[ATTR.delegationOutcome]);
  }

  it('a forged larger max_agent_depth cannot loosen the served agent\'s own ceiling', async () => {
    const server = await hub();
    // Served at depth 1: its child would be at 2, within its own ceiling of 2.
    expect(await outcomeAt(server, 0, 99)).toBe('delegated');
    // Served at depth 2: its child would be at 3; 99 from the wire does not lift the ceiling of 2.
    expect(await outcomeAt(server, 1, 99)).toBe('refused_depth');
  });

  it("a smaller max_agent_depth from the caller tightens it", async () => {
    const server = await hub();
    expect(await outcomeAt(server, 0, 1)).toBe('refused_depth');
    const served = rec.tree().find((n) => n.agent === 'hub');
    expect(served).toMatchObject({ depth: 1, parentRunId: 'caller-1', rootRunId: 'root-1' });
  });
});

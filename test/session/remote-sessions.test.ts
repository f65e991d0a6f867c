import { afterEach, describe, expect, it } from 'vitest';
import { InMemorySessionStore, SymfonicAgent, type Message } from '../../src/index.js';
import { remoteChild, serveAgent, type ServedAgent } from '../../src/remote/index.js';
import type { IncomingRequest } from '../../src/remote/principal.js';
import { scriptedModel } from '../../src/testing/index.js';
import { post } from '../remote/helpers.js';

const servers: ServedAgent[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Bearer tokens name principals, all of tenant acme. */
const authenticate = (req: IncomingRequest) => {
  const token = /^Bearer (\w+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
  return token === undefined ? null : { principal: token, tenants: ['acme'] };
};

async function servedOrders(seen: (readonly Message[])[]): Promise<{ url: string; agent: SymfonicAgent }> {
  const model = scriptedModel((request) => {
    seen.push(request.messages);
    return `orders answer ${seen.length}`;
  });
  const agent = new SymfonicAgent({ name: 'orders', modelProvider: model, sessions: new InMemorySessionStore() });
  const server = await serveAgent(agent, { authenticate });
  servers.push(server);
  return { url: server.url, agent };
}

function caller(url: string, token: string, memory?: 'session') {
  const model = scriptedModel((request) => {
    const last = request.messages.at(-1)!;
    if (last.role === 'user') return { toolCalls: [{ name: 'run_agent', arguments: { name: 'orders', task: `about: ${last.content}` } }] };
    return `relayed ${last.content}`;
  });
  const child = remoteChild({ name: 'orders', url, description: 'orders', headers: { authorization: `Bearer ${token}` }, ...(memory ? { memory } : {}) });
  return new SymfonicAgent({ name: 'router', modelProvider: model, subAgents: [child] });
}

describe('sessions across the A2A wire', () => {
  it("a remoteChild with memory 'session' keeps the served agent's conversation across the caller's turns", async () => {
    const seen: (readonly Message[])[] = [];
    const { url } = await servedOrders(seen);
    const router = caller(url, 'alice', 'session');
    const scope = { tenantId: 'acme', sessionId: 'chat-1' };
    await router.run('first', { scope });
    await router.run('second', { scope });
    expect(seen[1]!.map((m) => m.content)).toEqual(['about: first', 'orders answer 1', 'about: second']);
    // Another session of the caller is another conversation.
    await router.run('elsewhere', { scope: { ...scope, sessionId: 'chat-2' } });
    expect(seen[2]!.map((m) => m.content)).toEqual(['about: elsewhere']);
  });

  it('without memory each call is a conversation of its own', async () => {
    const seen: (readonly Message[])[] = [];
    const { url } = await servedOrders(seen);
    const router = caller(url, 'alice');
    const scope = { tenantId: 'acme', sessionId: 'chat-1' };
    await router.run('first', { scope });
    await router.run('second', { scope });
    expect(seen[1]!.map((m) => m.content)).toEqual(['about: second']);
  });

  it('a message with a known contextId and no taskId continues that conversation, for its principal only', async () => {
    const seen: (readonly Message[])[] = [];
    const { url, agent } = await servedOrders(seen);
    const send = (token: string, text: string, id: number) =>
      post(url, JSON.stringify({ jsonrpc: '2.0', id, method: 'SendMessage', params: { message: { messageId: `m-${id}`, contextId: 'ctx-9', role: 'ROLE_USER', parts: [{ text }] } } }), {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'a2a-version': '1.0',
      });
    expect((await send('alice', 'hello', 1)).status).toBe(200);
    await send('alice', 'again', 2);
    expect(seen[1]!.map((m) => m.content)).toEqual(['hello', 'orders answer 1', 'again']);
    // Another principal naming the same contextId starts its own conversation.
    await send('mallory', 'what did alice say?', 3);
    expect(seen[2]!.map((m) => m.content)).toEqual(['what did alice say?']);
    expect((await agent.session('acme', 'alice:ctx-9').turns())).toHaveLength(2);
    expect((await agent.session('acme', 'mallory:ctx-9').turns())).toHaveLength(1);
  });
});

/** serveAgent and remoteChild validate their options and refuse unknown keys, naming the fix. */
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, SymfonicAgent } from '../../src/index.js';
import { remoteChild, serveAgent } from '../../src/remote/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { bearer, collector, router, serveLeaf, type Served } from './helpers.js';

const rec = recordEachTest();
const open: Served[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.server.close()));
});

const agent = () => new SymfonicAgent({ name: 'a', modelProvider: scriptedModel(['x']) });

describe('serveAgent options', () => {
  it('requires authenticate, refuses unknown keys and bad values, and serves only a SymfonicAgent', async () => {
    await expect(serveAgent(agent(), {} as never)).rejects.toThrow(/authenticate is required/);
    await expect(serveAgent(agent(), { authenticate: bearer(), prot: 1 } as never)).rejects.toThrow(/serveAgent options: unknown option\(s\) "prot"\. Allowed: port, host, /);
    await expect(serveAgent(agent(), { authenticate: bearer(), port: 70000 })).rejects.toThrow(ConfigurationError);
    await expect(serveAgent(agent(), { authenticate: bearer(), path: 'a2a' })).rejects.toThrow(/path must start with "\/"/);
    await expect(serveAgent({ run: async () => ({}) } as never, { authenticate: bearer() })).rejects.toThrow(/serves a SymfonicAgent/);
  });

  it('binds 127.0.0.1 by default and mounts the endpoint at path, with the card beside it', async () => {
    const server = await serveAgent(agent(), { authenticate: bearer(), path: '/a2a/' });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/a2a$/);
      const card = (await (await fetch(`${server.url}/.well-known/agent-card.json`)).json()) as { name: string; supportedInterfaces: { url: string; protocolVersion: string }[] };
      expect(card.name).toBe('a');
      expect(card.supportedInterfaces.map((i) => [i.url, i.protocolVersion])).toEqual([[server.url, '1.0'], [server.url, '0.3']]);
      expect((await fetch(new URL('/elsewhere', server.url), { method: 'POST' })).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});

describe('remoteChild options', () => {
  it('refuses unknown keys, a URL that is not http(s), and a bad timeout', () => {
    const base = { name: 'r', url: 'http://127.0.0.1:1', description: 'd' };
    expect(() => remoteChild({ ...base, timeout: 5 } as never)).toThrow(/Unrecognized key: "timeout"/);
    expect(() => remoteChild({ ...base, url: 'ftp://x' })).toThrow(ConfigurationError);
    expect(() => remoteChild({ ...base, timeoutMs: -1 })).toThrow(ConfigurationError);
    expect(() => remoteChild({ ...base, headers: { 'bad header': 'x' } })).toThrow(/headers\["bad header"\]/);
    expect(() => remoteChild({ ...base, name: 'has space' })).toThrow(ConfigurationError);
    expect(() => remoteChild({ ...base, maxResponseBytes: 512 * 1024 * 1024 })).toThrow(/maxResponseBytes can be at most 268435456/);
    expect(() => remoteChild({ ...base, lineage: 'yes' } as never)).toThrow(/lineage/);
    expect(() => remoteChild({ ...base, stream: 1 } as never)).toThrow(/stream/);
    expect(() => remoteChild({ ...base, maxResponseBytes: 1 << 20, lineage: false, stream: false, timeoutMs: 1000 })).not.toThrow();
  });
});

describe('concurrent remote calls', () => {
  it('two run_agent calls in one turn reach the remote at once, each its own run in the tree', async () => {
    const researcher = await serveLeaf('researcher');
    open.push(researcher);
    const model = scriptedModel(async (req) =>
      req.messages.at(-1)?.role === 'tool'
        ? 'both done'
        : { toolCalls: [{ name: 'run_agent', arguments: { name: 'researcher', task: 'one' } }, { name: 'run_agent', arguments: { name: 'researcher', task: 'two' } }] },
    );
    const reply = await router({ name: 'researcher', url: researcher.server.url, description: 'Finds facts.' }, { model, collector: collector() }).run('q', { scope: { tenantId: 'acme' } });
    expect(reply.finalResponse).toBe('both done');
    rec.assertLineage();
    const tree = rec.tree(reply.runId)!;
    expect(tree.children.map((c) => c.agent)).toEqual(['researcher', 'researcher']);
    expect(new Set(tree.children.map((c) => c.runId)).size).toBe(2);
    expect([reply.totalUsage.inputTokens - reply.usage.inputTokens, reply.totalUsage.outputTokens - reply.usage.outputTokens]).toEqual([80, 8]);
  });
});

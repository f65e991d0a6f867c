/**
 * mcpTools({ needsApproval }): an MCP tool call that needs approval suspends the tree before it
 * reaches the server; approved on resume, the call goes out once. Against a real MCP server (the
 * SDK's own Server) over the SDK's in-memory transport.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, SymfonicAgent, mcpTools, type McpToolsOptions } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { decideAll, scope, toolResults } from './helpers.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

/** A server with a reading tool and a writing one; `received` is every tools/call that reached it. */
async function server() {
  const received: { name: string; arguments: unknown }[] = [];
  const s = new Server({ name: 'ledger', version: '1.0.0' }, { capabilities: { tools: {} } });
  s.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      { name: 'balance', description: 'Reads a balance.', inputSchema: { type: 'object' as const, properties: { account: { type: 'string' } }, required: ['account'] } },
      { name: 'transfer', description: 'Moves money.', inputSchema: { type: 'object' as const, properties: { amount: { type: 'number' } }, required: ['amount'] } },
    ],
  }));
  s.setRequestHandler(CallToolRequestSchema, async (request) => {
    received.push({ name: request.params.name, arguments: request.params.arguments });
    return { content: [{ type: 'text', text: `${request.params.name} ok` }] };
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await s.connect(serverSide);
  const client = new Client({ name: 'symfonic-test', version: '1.0.0' });
  await client.connect(clientSide);
  open.push(client, s);
  return { client, received };
}

async function banker(options: McpToolsOptions) {
  const { client, received } = await server();
  const model = scriptedModel((req) =>
    toolResults(req).length === 0
      ? {
          toolCalls: [
            { name: 'balance', arguments: { account: 'A-1' } },
            { name: 'transfer', arguments: { amount: 900 } },
          ],
        }
      : `done: ${toolResults(req).join(' + ')}`,
  );
  const agent = new SymfonicAgent({ name: 'banker', unsignedSnapshots: true, modelProvider: model, tools: await mcpTools(client, options) });
  return { agent, received, model };
}

describe('mcpTools needsApproval', () => {
  it('a function of the server tool name and input: only the call it holds for waits; approved, it reaches the server once', async () => {
    const asked: [string, unknown][] = [];
    const b = await banker({
      needsApproval: (tool, input) => {
        asked.push([tool, input]);
        return tool === 'transfer';
      },
    });
    const r = await b.agent.run('move 900', { scope });
    expect(r.status).toBe('suspended');
    expect(r.interruptions.map((i) => [i.tool, i.input])).toEqual([['transfer', { amount: 900 }]]);
    expect(asked).toEqual([
      ['balance', { account: 'A-1' }],
      ['transfer', { amount: 900 }],
    ]);
    expect(b.received.map((c) => c.name)).toEqual(['balance']);
    const done = await b.agent.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) });
    expect(done.finalResponse).toBe('done: balance ok + transfer ok');
    expect(b.received.map((c) => c.name)).toEqual(['balance', 'transfer']);
  });

  it('true: every call of the server waits; declined, none reaches it', async () => {
    const b = await banker({ needsApproval: true });
    const r = await b.agent.run('move 900', { scope });
    expect(r.interruptions.map((i) => i.tool)).toEqual(['balance', 'transfer']);
    await b.agent.resume(r.snapshot!, { decisions: decideAll(r, { approve: false, reason: 'not today' }) });
    expect(b.received).toEqual([]);
    expect(toolResults(b.model.calls[1]!).every((t) => t.includes('not today'))).toBe(true);
  });

  it('anything else is refused', async () => {
    const { client } = await server();
    await expect(mcpTools(client, { needsApproval: 'yes' as never })).rejects.toBeInstanceOf(ConfigurationError);
  });
});

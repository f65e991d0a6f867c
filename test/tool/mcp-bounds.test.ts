/**
 * What an MCP server hands over is bounded, and the caller says what its tools may do: a 50 MB
 * result reaches the model cut, with a note; a server listing 10,000 tools is refused with the
 * way out (include, or maxTools); the caller can mark tools read-only (so a spec child keeps them)
 * and say which calls wait for approval. A real SDK Server, over the SDK's in-memory transport.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { SubAgentSpec, SymfonicAgent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { mcpTools, McpToolError } from '../../src/tool/mcp-tools.js';
import type { ToolContext } from '../../src/tool/tool-context.js';

const ctx = { signal: new AbortController().signal } as ToolContext;
let open: { client: Client; server: Server }[] = [];
afterEach(async () => {
  for (const { client, server } of open) {
    await client.close();
    await server.close();
  }
  open = [];
});

/** A server listing `count` tools (t0…), whose calls answer with `reply(name)`. */
async function serverWith(count: number, reply: (name: string) => { content: { type: 'text'; text: string }[]; isError?: boolean }) {
  const server = new Server({ name: 'bounds', version: '1.0.0' }, { capabilities: { tools: {} } });
  const tools = Array.from({ length: count }, (_, i) => ({ name: `t${i}`, description: `Tool ${i}.`, inputSchema: { type: 'object' as const, properties: { q: { type: 'string' } } } }));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => reply(request.params.name));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'symfonic-test', version: '1.0.0' });
  await client.connect(clientSide);
  open.push({ client, server });
  return client;
}

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });
const FIFTY_MB = 50 * 1024 * 1024;

describe('a result too large for the model', () => {
  it('reaches the model cut to maxResultChars, with a note naming the tool, its size and the option', async () => {
    const client = await serverWith(1, () => text('x'.repeat(FIFTY_MB)));
    const tools = await mcpTools(client);
    const model = scriptedModel([{ toolCalls: [{ name: 't0', arguments: { q: 'all' } }] }, 'Summarised.']);
    await new SymfonicAgent({ name: 'reader', modelProvider: model, tools }).run('Read it.');
    const message = model.calls[1]!.messages.find((m) => m.role === 'tool')!.content;
    expect(message.length).toBeLessThan(100_000 + 300);
    expect(message.startsWith('x'.repeat(100_000))).toBe(true);
    expect(message).toContain(`[symfonic cut this result of the tool "t0": it was ${FIFTY_MB} characters, the first 100000 are above (raise the tool's maxResultChars (in defineTool, or in mcpTools for an MCP server's tools)).]`);
  });

  it('keeps a result within the limit whole, and takes a limit of the caller’s', async () => {
    const client = await serverWith(1, () => text('y'.repeat(5_000)));
    const [whole] = await mcpTools(client);
    expect(await whole!.execute({}, ctx)).toBe('y'.repeat(5_000));
    const small = await mcpTools(client, { maxResultChars: 1_000 });
    expect(small[0]!.maxResultChars).toBe(1_000);
    const model = scriptedModel([{ toolCalls: [{ name: 't0', arguments: {} }] }, 'Summarised.']);
    await new SymfonicAgent({ name: 'reader', modelProvider: model, tools: small }).run('Read it.');
    const cut = model.calls[1]!.messages.find((m) => m.role === 'tool')!.content;
    expect(cut.startsWith(`${'y'.repeat(1_000)}\n[symfonic cut`)).toBe(true);
    expect(cut).toContain('it was 5000 characters, the first 1000 are above');
  });

  it("cuts an error's text as well", async () => {
    const client = await serverWith(1, () => ({ ...text('e'.repeat(300_000)), isError: true }));
    const [tool] = await mcpTools(client);
    const error = await Promise.resolve(tool!.execute({}, ctx)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpToolError);
    expect((error as Error).message.length).toBeLessThan(100_000 + 300);
  });
});

describe('a server listing too many tools', () => {
  it('refuses 10,000 tools, naming the count, the limit and include', async () => {
    const client = await serverWith(10_000, () => text('ok'));
    const error = await mcpTools(client).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain('the MCP server offers 10000 tools, more than maxTools (128)');
    expect((error as Error).message).toContain('Name the tools this agent needs with include');
  });

  it('hands over what include keeps from the long list, and up to a raised maxTools', async () => {
    const client = await serverWith(10_000, () => text('ok'));
    expect((await mcpTools(client, { include: ['t7', 't9999'] })).map((t) => t.name)).toEqual(['t7', 't9999']);
    const some = await mcpTools(client, { include: (t) => Number(t.name.slice(1)) < 200, maxTools: 200 });
    expect(some).toHaveLength(200);
    await expect(mcpTools(client, { include: (t) => Number(t.name.slice(1)) < 200 })).rejects.toThrow(/offers 200 tools that include keeps, more than maxTools \(128\)/);
  });
});

describe('the caller says what the tools may do', () => {
  it('readOnly: true, a list of names or a test marks tools read-only; others stay write surfaces', async () => {
    const client = await serverWith(3, () => text('ok'));
    const writes = async (options: Parameters<typeof mcpTools>[1]) => (await mcpTools(client, options)).filter((t) => t.writeSurface).map((t) => t.name);
    expect(await writes({})).toEqual(['t0', 't1', 't2']);
    expect(await writes({ readOnly: true })).toEqual([]);
    expect(await writes({ readOnly: ['t1'] })).toEqual(['t0', 't2']);
    expect(await writes({ readOnly: (t) => t.name !== 't2' })).toEqual(['t2']);
  });

  it('refuses readOnly names that are not among the tools kept, so a typo cannot pass unnoticed', async () => {
    const client = await serverWith(3, () => text('ok'));
    await expect(mcpTools(client, { readOnly: ['t9'] })).rejects.toThrow(/readOnly names "t9", which are not among the tools kept/);
    await expect(mcpTools(client, { include: ['t0'], readOnly: ['t1'] })).rejects.toThrow(/readOnly names "t1"/);
  });

  it('a spec child keeps MCP tools the caller marked read-only', async () => {
    const client = await serverWith(2, (name) => text(`ran ${name}`));
    const tools = await mcpTools(client, { readOnly: true });
    const childModel = scriptedModel([{ toolCalls: [{ name: 't1', arguments: {} }] }, 'child done']);
    const parentModel = scriptedModel([{ toolCalls: [{ name: 'run_agent', arguments: { name: 'helper', task: 'use t1' } }] }, 'parent done']);
    const parent = new SymfonicAgent({
      name: 'parent',
      modelProvider: parentModel,
      subAgents: [new SubAgentSpec({ name: 'helper', description: 'Uses the MCP tools.', tools, modelProvider: childModel })],
    });
    expect((await parent.run('go')).finalResponse).toBe('parent done');
    expect(childModel.calls[0]!.tools.map((t) => t.name)).toEqual(['t0', 't1']);
    expect(childModel.calls[1]!.messages.find((m) => m.role === 'tool')!.content).toBe('ran t1');
  });

  it('needsApproval: true marks every tool; a function is asked with the server name and the arguments', async () => {
    const client = await serverWith(2, () => text('ok'));
    expect((await mcpTools(client)).map((t) => t.needsApproval)).toEqual([undefined, undefined]);
    expect((await mcpTools(client, { needsApproval: true })).map((t) => t.needsApproval)).toEqual([true, true]);
    const asked: [string, unknown][] = [];
    const tools = await mcpTools(client, { prefix: 'srv_', needsApproval: (tool, input) => (asked.push([tool, input]), tool === 't1') });
    const check = (i: number) => {
      const approval = tools[i]!.needsApproval;
      if (typeof approval !== 'function') throw new Error('expected a function');
      return approval({ q: `call ${i}` }, ctx);
    };
    expect([check(0), check(1)]).toEqual([false, true]);
    expect(asked).toEqual([['t0', { q: 'call 0' }], ['t1', { q: 'call 1' }]]);
  });

  it.each([
    [{ readOnly: 'all' }, /readOnly must be true, false, an array of tool names or a function/],
    [{ needsApproval: 'yes' }, /needsApproval must be true, false or a function/],
    [{ maxResultChars: 0 }, /maxResultChars must be greater than 0/],
    [{ maxTools: 2.5 }, /maxTools must be a whole number/],
  ])('refuses %o', async (options, pattern) => {
    const client = await serverWith(1, () => text('ok'));
    const error = await mcpTools(client, options as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(pattern);
  });
});

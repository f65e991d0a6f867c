/**
 * mcpTools against real MCP servers built with the SDK's own server API: one over stdio in a
 * child process, one over Streamable HTTP on loopback, and a paginating low-level Server. An agent
 * on a scripted model calls the tools; what reaches the server is read on the wire.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { SpanStatusCode } from '@opentelemetry/api';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { SymfonicAgent } from '../../src/index.js';
import { recordTelemetry, scriptedModel, type TelemetryRecording } from '../../src/testing/index.js';
import { mcpTools, McpToolError, type McpClient } from '../../src/tool/mcp-tools.js';
import { buildServer } from './fixtures/mcp-fixture.mjs';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const newClient = () => new Client({ name: 'symfonic-test', version: '1.0.0' });
const toolMessages = (model: ReturnType<typeof scriptedModel>, call: number) => (model.calls[call]?.messages ?? []).filter((m) => m.role === 'tool').map((m) => m.content);

/** The fixture server over Streamable HTTP on 127.0.0.1, noting each tools/call that arrives. */
async function httpFixture() {
  const { server, calls } = buildServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  await server.connect(transport);
  const wire: string[] = [];
  const http: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const body: unknown = raw === '' ? undefined : JSON.parse(raw);
      for (const m of [body].flat() as { method?: string; params?: { name?: string } }[]) {
        if (m?.method === 'tools/call') wire.push(String(m.params?.name));
      }
      void transport.handleRequest(req, res, body);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`)));
  return {
    client,
    calls,
    wire,
    async close() {
      await client.close();
      await transport.close();
      await server.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

let http: Awaited<ReturnType<typeof httpFixture>>;
let stdio: { client: Client; transport: StdioClientTransport };
let rec: TelemetryRecording;

beforeAll(async () => {
  rec = recordTelemetry();
  http = await httpFixture();
  const transport = new StdioClientTransport({ command: process.execPath, args: [join(FIXTURES, 'mcp-stdio-server.mjs')], cwd: ROOT, stderr: 'pipe' });
  const client = newClient();
  await client.connect(transport);
  stdio = { client, transport };
});

afterAll(async () => {
  await stdio?.client.close();
  await http?.close();
  await rec?.shutdown();
});

describe('mcpTools over stdio (a child process)', () => {
  it('an agent calls the server tools; results become tool messages and each call an execute_tool span', async () => {
    const tools = await mcpTools(stdio.client);
    expect(tools.map((t) => t.name).sort()).toEqual(['add', 'city_lookup', 'echo', 'fail', 'pid']);
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'add', arguments: { a: 2, b: 3 } },
          { name: 'echo', arguments: { text: 'hi', times: 2 } },
          { name: 'city_lookup', arguments: { city: 'Oslo' } },
        ],
      },
      'Done.',
    ]);
    const agent = new SymfonicAgent({ name: 'mcp_user', modelProvider: model, tools });
    rec.reset();
    const reply = await agent.run('Use the tools.', { scope: { tenantId: 'acme' } });
    expect(reply.finalResponse).toBe('Done.');
    // Structured content as JSON; several text blocks joined; a dotted MCP name reached under its own name.
    expect(toolMessages(model, 1)).toEqual(['{"sum":5}', '1: hi\n2: hi', 'Norway']);
    const spans = rec.spans().filter((s) => s.name.startsWith('execute_tool '));
    expect(spans.map((s) => s.name).sort()).toEqual(['execute_tool add', 'execute_tool city_lookup', 'execute_tool echo']);
    const run = rec.spans().find((s) => s.name === 'invoke_agent mcp_user')!;
    for (const s of spans) {
      expect(s.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
      expect(s.status.code).not.toBe(SpanStatusCode.ERROR);
    }
    rec.assertLineage();
    model.assertComplete();
  });

  it('the child process is gone once the caller closes the client', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [join(FIXTURES, 'mcp-stdio-server.mjs')], cwd: ROOT, stderr: 'pipe' });
    const client = newClient();
    await client.connect(transport);
    const pid = transport.pid!;
    const [pidTool] = await mcpTools(client, { include: ['pid'] });
    expect(await pidTool!.execute({}, { signal: new AbortController().signal } as never)).toBe(String(pid));
    await client.close();
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive()).toBe(false);
  });
});

describe('mcpTools over Streamable HTTP (loopback)', () => {
  it("passes each tool's JSON Schema to the model as the server wrote it, with the prefix on every name", async () => {
    const listed = (await http.client.listTools()).tools;
    const tools = await mcpTools(http.client, { prefix: 'fx_' });
    expect(tools.map((t) => t.name).sort()).toEqual(['fx_add', 'fx_city_lookup', 'fx_echo', 'fx_fail']);
    for (const t of tools) {
      const source = listed.find((l) => `fx_${l.name.replace('.', '_')}` === t.name)!;
      expect(t.parameters, t.name).toEqual(source.inputSchema);
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName['fx_add']!.description).toBe('Adds two integers.');
    // No description: the title stands in, since the model chooses tools by reading one.
    expect(byName['fx_city_lookup']!.description).toBe('City lookup');
    // MCP's default is that a tool may write; only readOnlyHint says otherwise.
    expect(byName['fx_add']!.writeSurface).toBe(false);
    expect(byName['fx_echo']!.writeSurface).toBe(true);
  });

  it('isError becomes a tool message saying the tool failed, with its text; the run goes on and the span records it', async () => {
    const tools = await mcpTools(http.client, { include: ['fail'] });
    const model = scriptedModel([{ toolCalls: [{ name: 'fail', arguments: { reason: 'the disk is full' } }] }, 'It could not be done.']);
    rec.reset();
    const reply = await new SymfonicAgent({ name: 'failing', modelProvider: model, tools }).run('Try.');
    expect(reply.finalResponse).toBe('It could not be done.');
    const [message] = toolMessages(model, 1);
    expect(message).toContain('tool "fail" failed');
    expect(message).toContain('McpToolError');
    expect(message).toContain('cannot do that: the disk is full');
    expect(http.calls['fail']).toBe(1);
    const span = rec.spans().find((s) => s.name === 'execute_tool fail')!;
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.attributes['error.type']).toBe('McpToolError');
    await expect(tools[0]!.execute({ reason: 'x' }, { signal: new AbortController().signal } as never)).rejects.toBeInstanceOf(McpToolError);
  });

  it("refuses arguments that break the tool's JSON Schema as a tool message, before anything reaches the server", async () => {
    const tools = await mcpTools(http.client);
    const before = [...http.wire];
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'add', arguments: { a: 'two', b: 3 } },
          { name: 'echo', arguments: { text: 'x', times: 9 } },
          { name: 'city_lookup', arguments: { city: 'Paris' } },
          { name: 'add', arguments: { a: 1.5, b: 1 } },
        ],
      },
      'Sorry.',
    ]);
    const reply = await new SymfonicAgent({ name: 'sloppy', modelProvider: model, tools }).run('Go.');
    expect(reply.finalResponse).toBe('Sorry.');
    const messages = toolMessages(model, 1);
    expect(messages).toHaveLength(4);
    for (const m of messages) expect(m).toMatch(/the arguments for tool "\w+" do not match its parameters/);
    expect(messages[0]).toMatch(/→ at a/);
    expect(messages[1]).toMatch(/→ at times/);
    expect(messages[2]).toMatch(/→ at city/);
    expect(messages[3]).toMatch(/expected int/);
    expect(http.wire).toEqual(before);
    expect(http.calls['add'] ?? 0).toBe(0);
  });

  it('include keeps the named tools or those a test passes, and refuses a name the server does not offer', async () => {
    expect((await mcpTools(http.client, { include: ['echo', 'add'] })).map((t) => t.name).sort()).toEqual(['add', 'echo']);
    expect((await mcpTools(http.client, { include: (t) => t.annotations?.readOnlyHint === true })).map((t) => t.name).sort()).toEqual(['add', 'city_lookup']);
    const error = await mcpTools(http.client, { include: ['add', 'search'] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(/include names "search", which the MCP server does not offer\. It offers: .*"add"/);
  });
});

describe('mcpTools options and names', () => {
  it('refuses unknown keys, a bad prefix, a bad include and something that is not a client', async () => {
    const cases: [unknown, unknown, RegExp][] = [
      [http.client, { prefix: 'x_', filter: [] }, /filter/],
      [http.client, { prefix: 'has space' }, /prefix must be at most 63 letters/],
      [http.client, { include: 'add' }, /include/],
      [{}, {}, /needs a connected MCP client/],
      [null, {}, /needs a connected MCP client/],
    ];
    for (const [client, options, message] of cases) {
      const error = await mcpTools(client as McpClient, options as never).catch((e: unknown) => e);
      expect(error, JSON.stringify(options)).toBeInstanceOf(ConfigurationError);
      expect((error as Error).message).toMatch(message);
    }
  });

  it('refuses a tool whose prefixed name model APIs would refuse, naming it and the way out', async () => {
    const error = await mcpTools(http.client, { prefix: 'p'.repeat(60) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(/the MCP tool "\w+(\.\w+)?" would be named "p{60}\w+", which model APIs refuse .* shorter prefix, or leave the tool out with include/);
  });

  it('refuses two server tools that would share a name', async () => {
    const client: McpClient = {
      listTools: async () => ({ tools: [{ name: 'a.b', inputSchema: { type: 'object' } }, { name: 'a/b', inputSchema: { type: 'object' } }] }),
      callTool: async () => ({ content: [] }),
    };
    await expect(mcpTools(client)).rejects.toThrow(/"a\.b" and "a\/b" would both be named "a_b"/);
  });

  it('refuses a schema it cannot validate against, naming the tool', async () => {
    const client: McpClient = {
      listTools: async () => ({ tools: [{ name: 'cond', inputSchema: { type: 'object', if: { required: ['a'] }, then: { required: ['b'] } } }] }),
      callTool: async () => ({ content: [] }),
    };
    await expect(mcpTools(client)).rejects.toThrow(/input schema of the MCP tool "cond" cannot be checked here .*Leave it out with include/);
  });

  it('follows tools/list pages to the end, and stops a server whose cursor repeats', async () => {
    const server = new Server({ name: 'paged', version: '1.0.0' }, { capabilities: { tools: {} } });
    const all = Array.from({ length: 5 }, (_, i) => ({ name: `t${i}`, description: `Tool ${i}.`, inputSchema: { type: 'object' as const, properties: {} } }));
    const cursors: (string | undefined)[] = [];
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      cursors.push(request.params?.cursor);
      const start = Number(request.params?.cursor ?? 0);
      const next = start + 2;
      return { tools: all.slice(start, next), ...(next < all.length ? { nextCursor: String(next) } : {}) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request) => ({ content: [{ type: 'text', text: `ran ${request.params.name}` }] }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = newClient();
    await client.connect(clientSide);
    try {
      const tools = await mcpTools(client);
      expect(tools.map((t) => t.name)).toEqual(['t0', 't1', 't2', 't3', 't4']);
      expect(cursors).toEqual([undefined, '2', '4']);
      expect(await tools[4]!.execute({}, { signal: new AbortController().signal } as never)).toBe('ran t4');
    } finally {
      await client.close();
      await server.close();
    }
    const looping: McpClient = { listTools: async () => ({ tools: [], nextCursor: 'again' }), callTool: async () => ({}) };
    await expect(mcpTools(looping)).rejects.toThrow(/repeated the cursor "again"/);
  });

  it('never loads the MCP SDK: nothing in the build imports it', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
    const importing = files(join(ROOT, 'src')).filter((f) => /from '@modelcontextprotocol|import\('@modelcontextprotocol/.test(readFileSync(f, 'utf8')));
    expect(importing).toEqual([]);
  });
});

import { z, type ZodType } from 'zod';
import { ConfigurationError, SymfonicError } from '../core/errors.js';
import { NAME_PATTERN, type Tool } from './define-tool.js';
import type { ToolContext } from './tool-context.js';

/**
 * The part of an MCP tool listing this module reads (`tools/list`). Structural, so the published
 * types never name @modelcontextprotocol/sdk: a user who has no MCP server installs nothing.
 */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  /** A JSON Schema object; sent to the model as it is. */
  inputSchema: { type: 'object'; [key: string]: unknown };
  annotations?: { title?: string; readOnlyHint?: boolean; [key: string]: unknown };
  [key: string]: unknown;
}

/** What `tools/call` answers, as far as it is turned into a tool message. */
export interface McpCallResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
  /** The result shape of protocol versions before 2024-11-05. */
  toolResult?: unknown;
  [key: string]: unknown;
}

/**
 * A connected MCP client: `Client` from @modelcontextprotocol/sdk (1.13 or newer) satisfies it.
 * symfonic never imports the SDK; it calls these two methods on the client it is given.
 */
export interface McpClient {
  listTools(params?: { cursor?: string }, options?: { signal?: AbortSignal }): Promise<{ tools: McpToolInfo[]; nextCursor?: string }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }, resultSchema?: undefined, options?: { signal?: AbortSignal }): Promise<McpCallResult>;
}

export interface McpToolsOptions {
  /** Put before every tool's name, e.g. "github_", so tools of several servers cannot collide. */
  prefix?: string;
  /** The server's tool names to keep (unprefixed), or a test each listed tool must pass. Default: all. */
  include?: readonly string[] | ((tool: McpToolInfo) => boolean);
}

/** An MCP server answered a tool call with `isError: true`. The model reads its text. */
export class McpToolError extends SymfonicError {
  constructor(
    readonly toolName: string,
    message: string,
  ) {
    super(message);
  }
}

const OptionsSchema = z.strictObject({
  prefix: z
    .string()
    .regex(/^[A-Za-z0-9_-]{0,63}$/, 'prefix must be at most 63 letters, digits, "_" or "-" (it becomes part of every tool name)')
    .optional(),
  include: z
    .union([z.array(z.string().min(1)), z.custom<(tool: McpToolInfo) => boolean>((v) => typeof v === 'function', 'include must be an array of tool names or a function')])
    .optional(),
});

/** A server that hands back the same cursor forever must not hang the caller. */
const MAX_PAGES = 1000;

async function listAll(client: McpClient): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? undefined : { cursor });
    if (!Array.isArray(result?.tools)) throw new ConfigurationError('the MCP server answered tools/list without a tools array.');
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined || cursor === '') return tools;
    if (seen.has(cursor)) throw new ConfigurationError(`the MCP server's tools/list repeated the cursor "${cursor}"; its pagination never ends.`);
    seen.add(cursor);
  }
  throw new ConfigurationError(`the MCP server's tools/list went on for more than ${MAX_PAGES} pages.`);
}

function selected(tools: McpToolInfo[], include: McpToolsOptions['include']): McpToolInfo[] {
  if (include === undefined) return tools;
  if (typeof include === 'function') return tools.filter((t) => include(t));
  const offered = new Set(tools.map((t) => t.name));
  const missing = include.filter((n) => !offered.has(n));
  if (missing.length > 0) {
    throw new ConfigurationError(
      `mcpTools: include names ${missing.map((n) => `"${n}"`).join(', ')}, which the MCP server does not offer. ` +
        `It offers: ${[...offered].map((n) => `"${n}"`).join(', ') || '(none)'}.`,
    );
  }
  return tools.filter((t) => include.includes(t.name));
}

/**
 * The name the model sees: prefix + the server's name, with each character model APIs refuse
 * (MCP allows ".", "/" and more) replaced by "_". The call still goes out under the server's name.
 */
function modelName(prefix: string, serverName: string): string {
  const name = prefix + serverName.replace(/[^A-Za-z0-9_-]/g, '_');
  if (!NAME_PATTERN.test(name)) {
    throw new ConfigurationError(
      `mcpTools: the MCP tool "${serverName}" would be named "${name}", which model APIs refuse (1–64 letters, digits, ` +
        `"_" or "-"). Use a shorter prefix, or leave the tool out with include.`,
    );
  }
  return name;
}

function inputSchemaOf(info: McpToolInfo): ZodType<Record<string, unknown>> {
  const schema = info.inputSchema as unknown;
  if (typeof schema !== 'object' || schema === null || (schema as { type?: unknown }).type !== 'object') {
    throw new ConfigurationError(`mcpTools: the MCP tool "${info.name}" has no object inputSchema; MCP requires one ({ "type": "object", ... }).`);
  }
  try {
    return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]) as ZodType<Record<string, unknown>>;
  } catch (error) {
    throw new ConfigurationError(
      `mcpTools: the input schema of the MCP tool "${info.name}" cannot be checked here (${(error as Error).message}), so its ` +
        `arguments could not be validated before the call. Leave it out with include.`,
    );
  }
}

/** One content block of a tool result as text the model reads. */
function blockText(block: unknown): string {
  const b = (typeof block === 'object' && block !== null ? block : {}) as Record<string, unknown>;
  const resource = (typeof b['resource'] === 'object' && b['resource'] !== null ? b['resource'] : {}) as Record<string, unknown>;
  switch (b['type']) {
    case 'text':
      return String(b['text'] ?? '');
    case 'image':
    case 'audio':
      return `[${String(b['type'])} ${String(b['mimeType'] ?? '')}, ${Math.floor((String(b['data'] ?? '').length * 3) / 4)} bytes]`;
    case 'resource_link':
      return `[resource ${String(b['uri'] ?? '')}${b['name'] ? ` "${String(b['name'])}"` : ''}]`;
    case 'resource':
      return typeof resource['text'] === 'string' ? resource['text'] : `[resource ${String(resource['uri'] ?? '')} ${String(resource['mimeType'] ?? '')}]`.trim();
    default:
      return JSON.stringify(block) ?? '';
  }
}

const contentText = (result: McpCallResult) => (Array.isArray(result.content) ? result.content.map(blockText).filter((t) => t !== '').join('\n') : '');

/**
 * A result as the model's tool message: structured content as JSON when the server gave it
 * (its text blocks are meant to repeat it), else the text blocks joined.
 */
function resultText(result: McpCallResult): string {
  if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  if (result.content === undefined && result.toolResult !== undefined) return JSON.stringify(result.toolResult);
  return contentText(result);
}

function toTool(client: McpClient, info: McpToolInfo, name: string): Tool<Record<string, unknown>> {
  const description = info.description?.trim() || info.title || info.annotations?.title || `The MCP tool "${info.name}".`;
  return Object.freeze({
    name,
    description,
    parameters: Object.freeze({ ...info.inputSchema }),
    input: inputSchemaOf(info),
    // MCP's own default: a tool may change the world unless its server says it only reads.
    writeSurface: info.annotations?.readOnlyHint !== true,
    async execute(input: Record<string, unknown>, ctx: ToolContext) {
      const result = await client.callTool({ name: info.name, arguments: input }, undefined, { signal: ctx.signal });
      if (result?.isError === true) {
        // Thrown so the run's tool span records the failure; the run loop turns it into the
        // tool message the model reads, and the run goes on.
        throw new McpToolError(info.name, contentText(result) || `the MCP tool "${info.name}" reported an error without text`);
      }
      return resultText(result ?? {});
    },
  });
}

/**
 * Turns a connected MCP client's tools into symfonic tools: each tool's JSON Schema goes to the
 * model as the server wrote it, the model's arguments are validated against it before the call,
 * and the call's result (or its `isError` text) is the tool message. Calls are traced as
 * `execute_tool {name}` spans like any tool's. The client stays the caller's to close.
 */
export async function mcpTools(client: McpClient, options: McpToolsOptions = {}): Promise<Tool<Record<string, unknown>>[]> {
  const c = client as Partial<McpClient> | null;
  if (typeof c !== 'object' || c === null || typeof c.listTools !== 'function' || typeof c.callTool !== 'function') {
    throw new ConfigurationError('mcpTools needs a connected MCP client (Client from @modelcontextprotocol/sdk, after await client.connect(transport)).');
  }
  const parsed = OptionsSchema.safeParse(options);
  if (!parsed.success) throw new ConfigurationError(`mcpTools options: ${z.prettifyError(parsed.error)}`);
  const prefix = parsed.data.prefix ?? '';
  const tools: Tool<Record<string, unknown>>[] = [];
  const byName = new Map<string, string>();
  for (const info of selected(await listAll(client), options.include)) {
    const name = modelName(prefix, info.name);
    const clash = byName.get(name);
    if (clash !== undefined) {
      throw new ConfigurationError(`mcpTools: the MCP tools "${clash}" and "${info.name}" would both be named "${name}"; leave one out with include.`);
    }
    byName.set(name, info.name);
    tools.push(toTool(client, info, name));
  }
  return tools;
}

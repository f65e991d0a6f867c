import { z, type ZodType } from 'zod';
import { ConfigurationError, SymfonicError } from '../core/errors.js';
import { NAME_PATTERN, type Tool } from './define-tool.js';
import { contentText, resultText, type McpCallResult } from './mcp-result.js';
import { capped, DEFAULT_MAX_RESULT_CHARS, maxResultCharsOption } from './result-bound.js';
import type { ToolContext } from './tool-context.js';

export type { McpCallResult };

/**
 * The part of an MCP tool listing this module reads (`tools/list`). Structural, so the published
 * types never name @modelcontextprotocol/sdk: a user who has no MCP server installs nothing.
 */
export interface McpToolInfo {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  /** A JSON Schema object; sent to the model as it is. */
  inputSchema: { type: 'object'; [key: string]: unknown };
  annotations?: { title?: string | undefined; readOnlyHint?: boolean | undefined; [key: string]: unknown } | undefined;
  [key: string]: unknown;
}

/**
 * A connected MCP client: `Client` from @modelcontextprotocol/sdk (1.13 or newer) satisfies it.
 * symfonic never imports the SDK; it calls these two methods on the client it is given.
 */
export interface McpClient {
  listTools(params?: { cursor?: string | undefined }, options?: { signal?: AbortSignal | undefined }): Promise<{ tools: McpToolInfo[]; nextCursor?: string | undefined }>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown> | undefined },
    resultSchema?: undefined,
    options?: { signal?: AbortSignal | undefined },
  ): Promise<McpCallResult>;
}

export interface McpToolsOptions {
  /** Put before every tool's name, e.g. "github_", so tools of several servers cannot collide. */
  prefix?: string;
  /** The server's tool names to keep (unprefixed), or a test each listed tool must pass. Default: all. */
  include?: readonly string[] | ((tool: McpToolInfo) => boolean);
  /**
   * Tools the caller vouches only read: all (`true`), these server names (unprefixed), or those a
   * test passes. A tool is a write surface unless its server says `readOnlyHint` or this marks it,
   * and write surfaces are kept from pre-built children and removed from spec children.
   */
  readOnly?: boolean | readonly string[] | ((tool: McpToolInfo) => boolean);
  /** Calls that wait for a person's approval: all, or those the test passes (server name, arguments). */
  needsApproval?: boolean | ((tool: string, input: unknown) => boolean);
  /** A result longer than this many characters is cut, with a note, before the model reads it. Default 100,000. */
  maxResultChars?: number;
  /** The most tools one call may hand an agent; every definition goes with every model call. Default 128. */
  maxTools?: number;
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

const isFunction = (v: unknown) => typeof v === 'function';
const namesOrTest = (option: string) =>
  z.union([z.array(z.string().min(1)), z.custom<(tool: McpToolInfo) => boolean>(isFunction)], {
    error: `${option} must be an array of tool names or a function`,
  });

const OptionsSchema = z.strictObject({
  prefix: z
    .string()
    .regex(/^[A-Za-z0-9_-]{0,63}$/, 'prefix must be at most 63 letters, digits, "_" or "-" (it becomes part of every tool name)')
    .optional(),
  include: namesOrTest('include').optional(),
  readOnly: z.union([z.boolean(), namesOrTest('readOnly')], { error: 'readOnly must be true, false, an array of tool names or a function' }).optional(),
  needsApproval: z
    .union([z.boolean(), z.custom<(tool: string, input: unknown) => boolean>(isFunction)], { error: 'needsApproval must be true, false or a function (tool, input) => boolean' })
    .optional(),
  maxResultChars: maxResultCharsOption.optional(),
  maxTools: z.int('maxTools must be a whole number').positive('maxTools must be greater than 0').optional(),
});

/** OpenAI's limit on tools in one request; more definitions also crowd every call's context. */
const DEFAULT_MAX_TOOLS = 128;

/** A server that hands back the same cursor forever must not hang the caller. */
const MAX_PAGES = 1000;
/** A server listing more than this is not read further: no `include` needs a longer list to choose from. */
const MAX_LISTED = 100_000;

async function listAll(client: McpClient): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? undefined : { cursor });
    if (!Array.isArray(result?.tools)) throw new ConfigurationError('the MCP server answered tools/list without a tools array.');
    if (tools.length + result.tools.length > MAX_LISTED) {
      throw new ConfigurationError(`the MCP server's tools/list went on past ${MAX_LISTED} tools; mcpTools does not read a list that long.`);
    }
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined || cursor === '') return tools;
    if (seen.has(cursor)) throw new ConfigurationError(`the MCP server's tools/list repeated the cursor "${cursor}"; its pagination never ends.`);
    seen.add(cursor);
  }
  throw new ConfigurationError(`the MCP server's tools/list went on for more than ${MAX_PAGES} pages.`);
}

function selected(tools: McpToolInfo[], include: McpToolsOptions['include'], maxTools: number): McpToolInfo[] {
  let kept = tools;
  if (typeof include === 'function') kept = tools.filter((t) => include(t));
  else if (include !== undefined) {
    checkOffered('include', include, tools);
    kept = tools.filter((t) => include.includes(t.name));
  }
  if (kept.length > maxTools) {
    throw new ConfigurationError(
      `mcpTools: the MCP server offers ${kept.length} tools${include === undefined ? '' : ' that include keeps'}, more than maxTools ` +
        `(${maxTools}): every tool's definition is sent with every model call, and model APIs refuse long lists (OpenAI: 128). ` +
        `Name the tools this agent needs with include: ["…", "…"] (or a function), or raise maxTools.`,
    );
  }
  return kept;
}

/** Names an option gives that must be among `tools`: a misspelt name must not pass unnoticed. */
function checkOffered(option: string, names: readonly string[], tools: readonly McpToolInfo[], among = 'the MCP server does not offer'): void {
  const offered = new Set(tools.map((t) => t.name));
  const missing = names.filter((n) => !offered.has(n));
  if (missing.length === 0) return;
  const shown = [...offered].slice(0, 50).map((n) => `"${n}"`).join(', ');
  throw new ConfigurationError(
    `mcpTools: ${option} names ${missing.map((n) => `"${n}"`).join(', ')}, which ${among}. ` +
      `It offers: ${shown || '(none)'}${offered.size > 50 ? `, and ${offered.size - 50} more` : ''}.`,
  );
}

function isReadOnly(info: McpToolInfo, readOnly: McpToolsOptions['readOnly']): boolean {
  if (info.annotations?.readOnlyHint === true || readOnly === true) return true;
  if (typeof readOnly === 'function') return readOnly(info);
  return Array.isArray(readOnly) && readOnly.includes(info.name);
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

type Settings = { readOnly: McpToolsOptions['readOnly']; needsApproval: McpToolsOptions['needsApproval']; maxResultChars: number };

function toTool(client: McpClient, info: McpToolInfo, name: string, settings: Settings): Tool<Record<string, unknown>> {
  const description = info.description?.trim() || info.title || info.annotations?.title || `The MCP tool "${info.name}".`;
  const approval = settings.needsApproval;
  return Object.freeze({
    name,
    description,
    parameters: Object.freeze({ ...info.inputSchema }),
    input: inputSchemaOf(info),
    // MCP's own default: a tool may change the world unless its server, or the caller, says it only reads.
    writeSurface: !isReadOnly(info, settings.readOnly),
    maxResultChars: settings.maxResultChars,
    ...(approval === undefined ? {} : { needsApproval: typeof approval === 'function' ? (input: Record<string, unknown>) => approval(info.name, input) : approval }),
    async execute(input: Record<string, unknown>, ctx: ToolContext) {
      const result = await client.callTool({ name: info.name, arguments: input }, undefined, { signal: ctx.signal });
      if (result?.isError === true) {
        // Thrown so the run's tool span records the failure; the run loop turns it into the
        // tool message the model reads, and the run goes on.
        const text = contentText(result) || `the MCP tool "${info.name}" reported an error without text`;
        throw new McpToolError(info.name, capped(text, settings.maxResultChars, info.name));
      }
      // Cut where every tool's result is, to this tool's maxResultChars.
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
  const settings: Settings = {
    readOnly: options.readOnly,
    needsApproval: options.needsApproval,
    maxResultChars: parsed.data.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS,
  };
  const listed = await listAll(client);
  const kept = selected(listed, options.include, parsed.data.maxTools ?? DEFAULT_MAX_TOOLS);
  if (Array.isArray(options.readOnly)) checkOffered('readOnly', options.readOnly, kept, 'are not among the tools kept (the server offers no such tool, or include leaves it out)');
  const tools: Tool<Record<string, unknown>>[] = [];
  const byName = new Map<string, string>();
  for (const info of kept) {
    const name = modelName(prefix, info.name);
    const clash = byName.get(name);
    if (clash !== undefined) {
      throw new ConfigurationError(`mcpTools: the MCP tools "${clash}" and "${info.name}" would both be named "${name}"; leave one out with include.`);
    }
    byName.set(name, info.name);
    tools.push(toTool(client, info, name, settings));
  }
  return tools;
}

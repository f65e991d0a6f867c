/**
 * Whether an OpenAI-compatible server can take tools, asked once. llama-server renders the
 * request through the model's chat template, and a template without tools drops them from the
 * prompt in silence (41 prompt tokens with or without them): the model never sees a tool, and
 * nothing fails. Its `GET /props` says so (`chat_template_caps.supports_tools: false`; older
 * builds: a top-level `supports_tools`). The probe is cheap (one GET, at most PROBE_TIMEOUT_MS,
 * a bounded read), made lazily before the adapter's first request with tools, shared by
 * concurrent first calls, and never fails a call: a server without /props, an error or a
 * timeout mean "nothing known".
 */
import { readBody } from './body-reader.js';
import { displayURL, joinURL } from './http-target.js';
import type { ModelRequest, ModelResponse } from './types.js';

export const PROBE_TIMEOUT_MS = 1_500;
/** /props carries the chat template's text: a few KiB, rarely more. */
const PROBE_MAX_BYTES = 1024 * 1024;

export interface ToolSupportTarget {
  provider: string;
  baseURL: string;
  headers: Record<string, string>;
  fetch: typeof fetch;
}

/**
 * The adapter's probe: `noted(request, response)` adds the warning to the first response of a
 * request with tools after the server said it cannot take them, and to no other, so the user
 * hears it once per adapter instance (its withOverrides copies share it).
 */
export class ToolSupportProbe {
  private answer: Promise<string | undefined> | undefined;
  private told = false;

  constructor(private readonly target: ToolSupportTarget) {}

  /** Waits (at most the probe's timeout, once) before a request with tools; nothing otherwise. */
  before(request: ModelRequest): Promise<void> | undefined {
    if (request.tools.length === 0 || this.told) return undefined;
    return (this.answer ??= probe(this.target)).then(() => undefined);
  }

  /** The response, with the warning the first time there is one to give. */
  async noted(request: ModelRequest, response: ModelResponse): Promise<ModelResponse> {
    if (request.tools.length === 0 || this.told || this.answer === undefined) return response;
    const warning = await this.answer;
    if (warning === undefined || this.told) return response;
    this.told = true;
    return { ...response, warnings: [...(response.warnings ?? []), warning] };
  }
}

/** The root a server's /props hangs off: the base URL without its trailing /v1. */
export function propsURL(baseURL: string): string {
  const url = new URL(baseURL);
  url.pathname = url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  return joinURL(url.toString(), '/props');
}

async function probe(target: ToolSupportTarget): Promise<string | undefined> {
  const url = propsURL(target.baseURL);
  const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
  try {
    const headers: Record<string, string> = { ...target.headers, accept: 'application/json' };
    delete headers['content-type'];
    const response = await target.fetch(url, { method: 'GET', headers, signal });
    if (!response.ok) {
      response.body?.cancel().catch(() => undefined);
      return undefined;
    }
    const body = await readBody(response, PROBE_MAX_BYTES, signal);
    if (!body.complete) return undefined;
    return warningFrom(JSON.parse(body.text) as unknown, target, url);
  } catch {
    return undefined;
  }
}

function warningFrom(props: unknown, target: ToolSupportTarget, url: string): string | undefined {
  if (typeof props !== 'object' || props === null) return undefined;
  const caps = (props as { chat_template_caps?: { supports_tools?: unknown } }).chat_template_caps;
  const field = caps?.supports_tools === false ? 'chat_template_caps.supports_tools' : (props as { supports_tools?: unknown }).supports_tools === false ? 'supports_tools' : undefined;
  if (field === undefined) return undefined;
  return (
    `${target.provider} at ${displayURL(target.baseURL)} says its chat template cannot take tools (GET ${displayURL(url)}: ${field} is false): ` +
    `the server leaves the tool definitions out of the prompt, so the model never sees them and will not call them. ` +
    `Serve the model with a tool-capable template (llama-server: --jinja --chat-template-file <template>), ` +
    `or pass checkToolSupport: false to openAICompatible() to stop asking.`
  );
}

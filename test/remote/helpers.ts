/**
 * Builders for the remote suite: a served agent behind a bearer token, a router that delegates
 * to it with remoteChild, and span lookups. Each side gets its own collector, as two processes
 * would have.
 */
import type { IncomingRequest } from '../../src/remote/principal.js';
import { SpanKind } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { MetricsCollector, priceTable, SymfonicAgent, type FrameworkConfig, type TenantBudgets } from '../../src/index.js';
import { remoteChild, serveAgent, USAGE_LINEAGE_EXTENSION, type Principal, type RemoteChildOptions, type ServedAgent } from '../../src/remote/index.js';
import { scriptedModel, type ScriptedModel, type ScriptedTurn } from '../../src/testing/index.js';

export const TOKEN = 'router-secret';
export const PRICE = { inputPerMTok: 2, outputPerMTok: 10 };

/** Bearer TOKEN is the router, acting for acme only; anything else is nobody. */
export function bearer(tenants: readonly string[] = ['acme']): (req: IncomingRequest) => Principal | null {
  return (req) => (req.headers.authorization === `Bearer ${TOKEN}` ? { principal: 'router', tenants } : null);
}

export function collector(budgets?: TenantBudgets): MetricsCollector {
  return new MetricsCollector({ prices: priceTable({ 'scripted-model': PRICE }), ...(budgets ? { budgets } : {}) });
}

/** A model that calls run_agent(child, task) first and answers `final` once the tool result is in. */
export function delegating(child: string, task: string, final: string, usage = { first: { inputTokens: 100, outputTokens: 10 }, second: { inputTokens: 150, outputTokens: 20 } }): ScriptedModel {
  return scriptedModel(async (req): Promise<ScriptedTurn> => {
    const last = req.messages[req.messages.length - 1];
    if (last?.role === 'tool') return { text: `${final} [${last.content}]`, usage: usage.second };
    return { toolCalls: [{ name: 'run_agent', arguments: { name: child, task } }], usage: usage.first };
  });
}

export interface Served {
  agent: SymfonicAgent;
  server: ServedAgent;
  collector: MetricsCollector;
}

/** Serves a leaf answering `answer` with 40 in / 4 out, on its own collector. */
export async function serveLeaf(
  name: string,
  opts: { answer?: string | ((req: unknown) => ScriptedTurn | Promise<ScriptedTurn>); budgets?: TenantBudgets; tenants?: readonly string[]; config?: FrameworkConfig; model?: ScriptedModel } = {},
): Promise<Served> {
  const c = collector(opts.budgets);
  const answer = opts.answer ?? `${name} found it`;
  const model =
    opts.model ??
    scriptedModel(async (req) => (typeof answer === 'function' ? answer(req) : { text: answer, usage: { inputTokens: 40, outputTokens: 4 } }));
  const agent = new SymfonicAgent({ name, modelProvider: model, description: `The ${name}.`, metricsCollector: c, ...(opts.config ? { config: opts.config } : {}) });
  const server = await serveAgent(agent, { authenticate: bearer(opts.tenants) });
  return { agent, server, collector: c };
}

export function router(child: RemoteChildOptions, opts: { collector?: MetricsCollector; model?: ScriptedModel; config?: FrameworkConfig } = {}): SymfonicAgent {
  return new SymfonicAgent({
    name: 'router',
    modelProvider: opts.model ?? delegating(child.name, 'find the facts', 'done'),
    metricsCollector: opts.collector ?? collector(),
    subAgents: [remoteChild({ headers: { authorization: `Bearer ${TOKEN}` }, ...child })],
    ...(opts.config ? { config: opts.config } : {}),
    // Resumed from snapshots nobody signs: the application says so (the remote's approvals are checked on its server).
    unsignedSnapshots: true,
  });
}

/** A run's span: invoke_agent with a run id (the caller's CLIENT span for a hop has none). */
export const runSpan = (spans: ReadableSpan[], agent: string) => spans.find((s) => s.name === `invoke_agent ${agent}` && s.attributes['symfonic.run_id'] !== undefined);
/** The caller's CLIENT span for a remote hop. */
export const clientSpan = (spans: ReadableSpan[], agent: string) => spans.find((s) => s.name === `invoke_agent ${agent}` && s.kind === SpanKind.CLIENT);
export const delegationSpan = (spans: ReadableSpan[]) => spans.find((s) => s.name === 'execute_tool run_agent');

/** A v1 JSON-RPC SendMessage body, as the A2A 1.0 JSON binding spells it. */
export function sendMessageBody(text: string, id: number | string = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'SendMessage', params: { message: { messageId: `m-${id}`, role: 'ROLE_USER', parts: [{ text }] } } });
}

/**
 * POSTs a body to a served agent; `headers` replace the defaults (bearer token, A2A 1.0, and
 * symfonic's extension activated, as remoteChild activates it).
 */
export async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; json: any; text: string; headers: Headers }> {
  const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${TOKEN}`, 'a2a-extensions': USAGE_LINEAGE_EXTENSION, ...headers } });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

/** The usage-lineage extension's entry in a task's (or update's) metadata. */
export const ext = (metadata: any): any => metadata?.[USAGE_LINEAGE_EXTENSION];

/** W3C baggage header from entries (values percent-encoded). */
export function baggage(entries: Record<string, string | number>): string {
  return Object.entries(entries)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join(',');
}

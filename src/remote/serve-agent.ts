import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TextMapPropagator } from '@opentelemetry/api';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { RunOptions } from '../agent/run-options.js';
import type { SymfonicAgent } from '../agent/symfonic-agent.js';
import { AbortError } from '../core/errors.js';
import { agentCard } from './agent-card.js';
import { readBody, sendError, sendJson, sendRaw } from './http-io.js';
import { checkPrincipal, type Principal } from './principal.js';
import { loadPropagator, loadServerSdk, type ServerSdk } from './sdk.js';
import { resolveServeOptions, type ResolvedServeOptions, type ServeAgentOptions } from './serve-options.js';
import { servedFrame } from './served-frame.js';
import { SERVED_FAILURE, SERVED_RUN, ServedAgentExecutor } from './served-executor.js';
import { plainReply, plainSend } from './plain-send.js';
import { usageReport } from './usage-report.js';
import { runServed } from './served-run.js';
import { RecentTaskStore } from './task-store.js';
import { AGENT_CARD_PATH, USAGE_KEY } from './wire.js';

export interface ServedAgent {
  /** The agent's base URL: its card is at `${url}/.well-known/agent-card.json`. */
  readonly url: string;
  /** Stops listening, aborts the runs in flight and waits for the server to close. */
  close(): Promise<void>;
}

interface Transports {
  v1: { handle(body: string | object, context: ServerCallContext): Promise<unknown> };
  legacy: { handle(body: string, context: ServerCallContext): Promise<unknown> };
}


class Served {
  private readonly inFlight = new Set<AbortController>();

  constructor(
    private readonly sdk: ServerSdk,
    private readonly propagator: TextMapPropagator,
    private readonly agent: SymfonicAgent,
    private readonly options: ResolvedServeOptions,
    private readonly cardJson: string,
    private readonly transports: Transports,
  ) {}

  private cardPaths(): string[] {
    return this.options.path === '/' ? [AGENT_CARD_PATH] : [AGENT_CARD_PATH, this.options.path + AGENT_CARD_PATH];
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    this.route(req, res).catch((error: unknown) => {
      this.agent.logger.error({ err: error }, 'serveAgent: request failed');
      sendError(res, 500, 'the server failed to handle the request');
    });
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // The endpoint's own path, as every call spells it, skips the URL parser.
    const pathname = req.url === this.options.path ? req.url : new URL(req.url ?? '/', 'http://localhost').pathname;
    if (this.cardPaths().includes(pathname)) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, 405, 'the agent card is read with GET', { allow: 'GET, HEAD' });
      return sendRaw(res, this.cardJson);
    }
    if (pathname !== this.options.path) return sendError(res, 404, `nothing is served at ${pathname}; the A2A endpoint is ${this.options.path}`);
    if (req.method !== 'POST') return sendError(res, 405, 'the A2A JSON-RPC endpoint takes POST', { allow: 'POST' });
    const principal = await this.authenticate(req, res);
    if (principal === undefined) return;
    const frame = servedFrame(this.propagator, req.headers, principal);
    if (!frame.ok) return sendError(res, frame.status, frame.message);
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > this.options.maxBodyBytes) return this.tooLarge(req, res);
    const body = await readBody(req, this.options.maxBodyBytes);
    if (body === 'too-large') return this.tooLarge(req, res);
    await this.dispatch(req, res, body, principal, frame.options);
  }

  /** The principal, or undefined once a 401 (or a 500 for a broken hook) has been sent. */
  private async authenticate(req: IncomingMessage, res: ServerResponse): Promise<Principal | undefined> {
    let checked: Principal | null | string;
    try {
      checked = checkPrincipal(await this.options.authenticate(req));
    } catch (error) {
      this.agent.logger.error({ err: error }, 'serveAgent: authenticate threw');
      sendError(res, 500, 'authentication failed on the server');
      return undefined;
    }
    if (typeof checked === 'string') {
      this.agent.logger.error({ problem: checked }, 'serveAgent: authenticate returned a bad value');
      sendError(res, 500, 'authentication failed on the server');
      return undefined;
    }
    if (checked === null) {
      sendError(res, 401, 'authentication required: this agent did not recognise the credentials sent', { 'www-authenticate': 'Bearer' });
      return undefined;
    }
    return checked;
  }

  /** 413, then the connection is dropped: the rest of an oversized body is never read. */
  private tooLarge(req: IncomingMessage, res: ServerResponse): void {
    sendError(res, 413, `the request body is larger than this agent accepts (${this.options.maxBodyBytes} bytes)`, { connection: 'close' });
    res.once('finish', () => req.destroy());
  }

  private async dispatch(
    req: IncomingMessage,
    res: ServerResponse,
    body: string,
    principal: Principal,
    runOptions: Omit<RunOptions, 'signal'>,
  ): Promise<void> {
    const controller = new AbortController();
    this.inFlight.add(controller);
    // The caller hanging up is the abort that crosses the wire: its run is stopped, not orphaned.
    const onClose = () => {
      if (!res.writableFinished) controller.abort(new AbortError('the caller closed the connection'));
    };
    res.once('close', onClose);
    try {
      const version = header(req, 'a2a-version');
      const legacy = version === undefined || version.startsWith('0.');
      const rpc = legacy ? undefined : parsedObject(body);
      const options: RunOptions = { ...runOptions, signal: controller.signal };
      const state = new Map<string, unknown>([[SERVED_RUN, options]]);
      const plain = rpc === undefined ? undefined : plainSend(rpc);
      if (plain !== undefined) {
        try {
          const response = await runServed(this.agent, plain.task, options);
          return sendRaw(res, plainReply(plain.id, randomUUID(), plain.contextId || randomUUID(), response.finalResponse, { [USAGE_KEY]: usageReport(response) }));
        } catch (error) {
          // The SDK spells the failed task and keeps it for GetTask; the executor publishes this error.
          state.set(SERVED_FAILURE, error);
        }
      }
      const context = new this.sdk.server.ServerCallContext({
        user: { isAuthenticated: true, userName: principal.principal },
        requestedVersion: version ?? '0.3',
        state,
      });
      const answer = await (legacy ? this.transports.legacy.handle(body, context) : this.transports.v1.handle(rpc ?? body, context));
      if (isAsyncIterable(answer)) {
        void answer[Symbol.asyncIterator]().return?.(undefined);
        return sendJson(res, { jsonrpc: '2.0', id: null, error: { code: -32004, message: 'streaming is not supported by this agent; use SendMessage' } });
      }
      sendJson(res, answer);
    } finally {
      res.off('close', onClose);
      this.inFlight.delete(controller);
    }
  }

  abortAll(): void {
    for (const c of this.inFlight) c.abort(new AbortError('the served agent is closing'));
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

/** The body as a JSON object, or undefined: the SDK then answers a parse error in its own words. */
function parsedObject(body: string): object | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function isAsyncIterable(v: unknown): v is AsyncIterable<unknown> {
  return typeof (v as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function';
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Serves a SymfonicAgent as an A2A agent over JSON-RPC: each message is one run, a child of the
 * caller's run in every sense (trace, lineage, depth ceiling, deadline, tenant), answered with
 * the run's text and its usage under `symfonic/usage`.
 */
export async function serveAgent(agent: SymfonicAgent, options: ServeAgentOptions): Promise<ServedAgent> {
  const resolved = resolveServeOptions(agent, options);
  const [sdk, propagator] = await Promise.all([loadServerSdk(), loadPropagator()]);
  let served: Served | undefined;
  const server = createServer((req, res) => (served ? served.handle(req, res) : sendError(res, 503, 'the agent is starting; retry')));
  const address = await listen(server, resolved.port, resolved.host);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const base = `http://${host}:${address.port}`;
  const url = resolved.path === '/' ? base : base + resolved.path;
  // The card names the endpoint's URL, known only once listening.
  const card = agentCard(sdk, agent, resolved.path === '/' ? `${base}/` : url);
  const handler = new sdk.server.DefaultRequestHandler(card, new RecentTaskStore(resolved.recentTasks), new ServedAgentExecutor(sdk, agent));
  served = new Served(sdk, propagator, agent, resolved, JSON.stringify(sdk.core.AgentCard.toJSON(card)), {
    v1: new sdk.server.JsonRpcTransportHandler(handler),
    legacy: new sdk.legacyServer.LegacyJsonRpcTransportHandler(handler),
  });
  const running = served;
  let closing: Promise<void> | undefined;
  return Object.freeze({
    url,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        running.abortAll();
        server.close(() => resolve());
        server.closeIdleConnections();
        // Runs just aborted answer within a tick; whatever still holds a socket after that is cut.
        setTimeout(() => server.closeAllConnections(), 100).unref();
      })),
  });
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TextMapPropagator } from '@opentelemetry/api';
import type { SymfonicAgent } from '../agent/symfonic-agent.js';
import { agentCards, cardFor } from './agent-card.js';
import { activatesUsageLineage } from './extension.js';
import { readBody, sendError, sendEvent, sendRaw, sendStream } from './http-io.js';
import { checkPrincipal, type Principal } from './principal.js';
import { readRpc, RPC_CODE, RpcRefusal, type RpcRequest } from './rpc-envelope.js';
import { legacyParamsProblem, LEGACY_METHODS, STREAMING_METHODS, v1ParamsProblem, V1_METHODS } from './rpc-params.js';
import { loadPropagator, loadServerSdk, type ServerSdk } from './sdk.js';
import { resolveServeOptions, type ResolvedServeOptions, type ServeAgentOptions } from './serve-options.js';
import { servedFrame } from './served-frame.js';
import { ServedTasks, type ServedRequest } from './served-handler.js';
import { answerV1, type RpcAnswer, type RpcStream } from './served-jsonrpc.js';
import { LegacyHandler, SERVED_REQUEST } from './legacy-handler.js';
import { AGENT_CARD_PATH, HEADER, USAGE_LINEAGE_EXTENSION } from './wire.js';
import type { DurableTrees } from './durable-trees.js';

export interface ServedAgent {
  /** The agent's base URL: its card is at `${url}/.well-known/agent-card.json`. */
  readonly url: string;
  /** Stops listening, aborts the runs in flight and waits for the server to close. */
  close(): Promise<void>;
}

interface LegacyTransport {
  handle(body: Record<string, unknown>, context: InstanceType<ServerSdk['server']['ServerCallContext']>): Promise<unknown>;
}

const RUN_METHODS = new Set(['SendMessage', 'SendStreamingMessage', 'message/send', 'message/stream']);

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

function isAsyncIterable(v: unknown): v is AsyncIterable<unknown> {
  return typeof (v as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function';
}

/** The HTTP side of a served agent: the card, the door (authentication, size, lineage) and JSON-RPC dispatch. */
class Served {
  constructor(
    private readonly sdk: ServerSdk,
    private readonly propagator: TextMapPropagator,
    private readonly agent: SymfonicAgent,
    private readonly options: ResolvedServeOptions,
    private readonly cards: { v1: string; v03: string; either: string },
    private readonly tasks: ServedTasks,
    private readonly legacy: LegacyTransport,
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
      return sendRaw(res, cardFor(this.cards, header(req, HEADER.version)), { vary: 'A2A-Version' });
    }
    if (pathname !== this.options.path) return sendError(res, 404, `nothing is served at ${pathname}; the A2A endpoint is ${this.options.path}`);
    if (req.method !== 'POST') return sendError(res, 405, 'the A2A JSON-RPC endpoint takes POST', { allow: 'POST' });
    const principal = await this.authenticate(req, res);
    if (principal === undefined) return;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > this.options.maxBodyBytes) return this.tooLarge(req, res);
    const body = await readBody(req, this.options.maxBodyBytes);
    if (body === 'too-large') return this.tooLarge(req, res);
    const rpc = readRpc(body);
    if (rpc instanceof RpcRefusal) return sendRaw(res, rpc.json());
    await this.dispatch(req, res, rpc, principal);
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

  /** Which binding answers `rpc`, or the refusal: an unknown method, an unspoken version, bad params. */
  private binding(req: IncomingMessage, rpc: RpcRequest): 'v1' | 'legacy' | RpcRefusal {
    const version = header(req, HEADER.version);
    if (version !== undefined && !/^(0\.3|1\.0)(\.\d+)?$/.test(version)) {
      return new RpcRefusal(rpc.id, RPC_CODE.versionNotSupported, `A2A-Version ${version} is not spoken here; this agent speaks 1.0 and 0.3`);
    }
    const v1 = V1_METHODS.has(rpc.method);
    if (!v1 && !LEGACY_METHODS.has(rpc.method)) return new RpcRefusal(rpc.id, RPC_CODE.methodNotFound, `no method ${rpc.method}; A2A 1.0 methods are ${[...V1_METHODS].join(', ')}`);
    const problem = v1 ? v1ParamsProblem(rpc.method, rpc.params) : legacyParamsProblem(rpc.method, rpc.params);
    if (problem !== undefined) return new RpcRefusal(rpc.id, problem.code, problem.message);
    return v1 ? 'v1' : 'legacy';
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse, rpc: RpcRequest, principal: Principal): Promise<void> {
    const binding = this.binding(req, rpc);
    // A streaming method's errors come as its stream: one event carrying the JSON-RPC error.
    const streaming = STREAMING_METHODS.has(rpc.method);
    if (binding instanceof RpcRefusal) return streaming ? sendEvent(res, binding.json()) : sendRaw(res, binding.json());
    const extension = activatesUsageLineage(req.headers);
    let runOptions: ServedRequest['runOptions'];
    if (RUN_METHODS.has(rpc.method)) {
      const frame = servedFrame(this.propagator, req.headers, principal, extension);
      if (!frame.ok) return sendError(res, frame.status, frame.message, {}, rpc.id);
      runOptions = frame.options;
    }
    const hangUps: (() => void)[] = [];
    const onClose = () => {
      if (!res.writableFinished) for (const f of hangUps) f();
    };
    res.once('close', onClose);
    const request: ServedRequest = { principal, runOptions, extension, onHangUp: (f) => hangUps.push(f) };
    const headers: Record<string, string> = extension ? { 'a2a-extensions': USAGE_LINEAGE_EXTENSION } : {};
    try {
      const answer = binding === 'v1' ? await answerV1(this.tasks, rpc, request) : await this.answerLegacy(rpc, request);
      if (typeof answer !== 'string') await sendStream(res, answer, headers, this.options.streamWriteTimeoutMs);
      else if (streaming) sendEvent(res, answer, headers);
      else sendRaw(res, answer, headers);
    } finally {
      res.off('close', onClose);
    }
  }

  /** A 0.3 request, through the SDK's 0.3 transport over the same tasks. */
  private async answerLegacy(rpc: RpcRequest, request: ServedRequest): Promise<RpcAnswer> {
    const context = new this.sdk.server.ServerCallContext({
      user: { isAuthenticated: true, userName: request.principal.principal },
      requestedVersion: '0.3',
      state: new Map([[SERVED_REQUEST, request]]),
    });
    const answer = await this.legacy.handle({ jsonrpc: '2.0', id: rpc.id, method: rpc.method, params: rpc.params }, context);
    return isAsyncIterable(answer) ? pumped(answer) : JSON.stringify(answer);
  }
}

/** An iteration of responses (the SDK's 0.3 streams) as a stream the HTTP layer starts. */
function pumped(answers: AsyncIterable<unknown>): RpcStream {
  return {
    start(write, end) {
      const iterator = answers[Symbol.asyncIterator]();
      let stopped = false;
      void (async () => {
        try {
          for (let next = await iterator.next(); !next.done && !stopped; next = await iterator.next()) write(JSON.stringify(next.value));
        } finally {
          end();
        }
      })();
      return () => {
        stopped = true;
        void iterator.return?.(undefined);
      };
    },
  };
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
 * Serves a SymfonicAgent as an A2A agent over JSON-RPC (1.0 and 0.3): each message is one run,
 * kept as a task; a caller in a symfonic tree that activates the usage-lineage extension makes
 * it a child of its run in every sense (trace, lineage, depth ceiling, deadline, tenant) and
 * reads its usage back from the task. Given a `symfonic/durable` runtime (and a RedisTaskStore
 * its replicas share), each task is a durable tree that another replica finishes should this one die.
 */
export async function serveAgent(served: SymfonicAgent | DurableTrees, options: ServeAgentOptions): Promise<ServedAgent> {
  const resolved = resolveServeOptions(served, options);
  const agent = resolved.runner.agent;
  const [sdk, propagator] = await Promise.all([loadServerSdk(), loadPropagator()]);
  let serving: Served | undefined;
  const server = createServer((req, res) => (serving ? serving.handle(req, res) : sendError(res, 503, 'the agent is starting; retry')));
  const address = await listen(server, resolved.port, resolved.host);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const base = `http://${host}:${address.port}`;
  const url = resolved.path === '/' ? base : base + resolved.path;
  // The card names the endpoint's URL: the deployment's public one when given, else the bound address.
  const cards = agentCards(agent, resolved.publicUrl ?? (resolved.path === '/' ? `${base}/` : url));
  const store = resolved.tasks;
  const tasks = new ServedTasks(resolved.runner, store);
  const legacy = new sdk.legacyServer.LegacyJsonRpcTransportHandler(new LegacyHandler(sdk, tasks, sdk.core.AgentCard.fromJSON(cards.v1))) as LegacyTransport;
  serving = new Served(sdk, propagator, agent, resolved, { v1: JSON.stringify(cards.v1), v03: JSON.stringify(cards.v03), either: JSON.stringify(cards.either) }, tasks, legacy);
  let closing: Promise<void> | undefined;
  return Object.freeze({
    url,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        for (const t of [...store.running()]) t.abort('the served agent is closing');
        server.close(() => resolve());
        server.closeIdleConnections();
        // Runs just aborted answer within a tick; whatever still holds a socket after that is cut.
        setTimeout(() => server.closeAllConnections(), 100).unref();
      })),
  });
}

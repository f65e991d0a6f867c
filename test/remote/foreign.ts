/**
 * An A2A agent made of the A2A SDK's server pieces alone (DefaultRequestHandler, its in-memory
 * task store, its JSON-RPC transport handler) on a plain node:http server: an implementation we
 * did not write, for remoteChild to call. It records what reached it.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { propagation, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { AGENT_CARD_PATH, AgentCard, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, JsonRpcTransportHandler, ServerCallContext, type AgentExecutor } from '@a2a-js/sdk/server';

export interface ForeignOptions {
  answer?: string;
  /** Declared in the card (and served): SendStreamingMessage answers with SSE. */
  streaming?: boolean;
  /** Extension URIs the card declares. */
  extensions?: string[];
  /** The task works this long before answering; a CancelTask ends it CANCELED at once. */
  workMs?: number;
  /** Task metadata sent with the answer (a foreign agent imitating symfonic's extension, say). */
  metadata?: Record<string, unknown>;
  /** Handle each request inside a SERVER span of the caller's trace (read from its traceparent). */
  traced?: boolean;
}

export interface Foreign {
  url: string;
  /** Headers of every JSON-RPC request, in order, with the method called. */
  requests: { method: string; headers: IncomingHttpHeaders; params: Record<string, unknown> }[];
  /** Task ids the executor was asked to cancel. */
  cancelled: string[];
  store: InMemoryTaskStore;
  close(): Promise<void>;
}

const textPart = (value: string) => ({ content: { $case: 'text' as const, value }, mediaType: 'text/plain', filename: '', metadata: undefined });

export async function foreignAgent(o: ForeignOptions = {}): Promise<Foreign> {
  const answer = o.answer ?? 'Paris is the capital of France.';
  const cancelled: string[] = [];
  const stops = new Map<string, () => void>();
  const now = () => new Date().toISOString();
  const executor: AgentExecutor = {
    async execute(rc, bus) {
      const base = { id: rc.taskId, contextId: rc.contextId, artifacts: [], history: [rc.userMessage], metadata: o.metadata ?? {} };
      bus.publish(AgentEvent.task({ ...base, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: now() } }));
      if (o.workMs) {
        const stopped = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), o.workMs);
          stops.set(rc.taskId, () => (clearTimeout(timer), resolve(true)));
        });
        stops.delete(rc.taskId);
        if (stopped) return;
      }
      bus.publish(AgentEvent.artifactUpdate({ taskId: rc.taskId, contextId: rc.contextId, append: false, lastChunk: true, metadata: {}, artifact: { artifactId: 'a1', name: 'answer', description: '', parts: [textPart(answer)], metadata: {}, extensions: [] } }));
      bus.publish(AgentEvent.statusUpdate({ taskId: rc.taskId, contextId: rc.contextId, metadata: o.metadata ?? {}, status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: now() } }));
    },
    async cancelTask(taskId, bus) {
      cancelled.push(taskId);
      stops.get(taskId)?.();
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', metadata: {}, status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: now() } }));
    },
  };
  let url = '';
  const card = (): AgentCard => ({
    name: 'geo', description: 'Answers geography.', version: '1', provider: undefined,
    capabilities: { streaming: o.streaming ?? false, pushNotifications: false, extensions: (o.extensions ?? []).map((uri) => ({ uri, description: '', required: false, params: undefined })) },
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }], securitySchemes: {}, securityRequirements: [],
    defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [], signatures: [],
  });
  const store = new InMemoryTaskStore();
  let handler: DefaultRequestHandler | undefined;
  const requests: Foreign['requests'] = [];
  const server: Server = createServer(async (req, res) => {
    if (req.method === 'GET' && req.url === `/${AGENT_CARD_PATH}`) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(AgentCard.toJSON(card())));
      return;
    }
    let body = '';
    for await (const chunk of req) body += chunk;
    const rpc = JSON.parse(body) as { method: string; params: Record<string, unknown> };
    requests.push({ method: rpc.method, headers: req.headers, params: rpc.params });
    handler ??= new DefaultRequestHandler(card(), store, executor);
    const span = o.traced ? trace.getTracer('js-sdk-agent').startSpan('js-sdk serve', { kind: SpanKind.SERVER }, propagation.extract(ROOT_CONTEXT, req.headers)) : undefined;
    res.once('close', () => span?.end());
    const answer = await new JsonRpcTransportHandler(handler).handle(body, new ServerCallContext({ requestedVersion: '1.0' }));
    if (typeof (answer as AsyncIterable<unknown>)[Symbol.asyncIterator] !== 'function') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for await (const event of answer as AsyncIterable<unknown>) res.write(`data: ${JSON.stringify(event)}\n\n`);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    requests,
    cancelled,
    store,
    close: () => {
      for (const stop of stops.values()) stop();
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

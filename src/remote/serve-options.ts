import { z } from 'zod';
import { SymfonicAgent } from '../agent/symfonic-agent.js';
import { ConfigurationError } from '../core/errors.js';
import { checked, refuseUnknownKeys } from '../core/options.js';
import { durableRunner } from './durable-runner.js';
import { isDurableTrees, type DurableTrees } from './durable-trees.js';
import { InMemoryTaskStore } from './in-memory-task-store.js';
import { RedisTaskStore } from './redis-task-store.js';
import { inProcessRunner, type TaskRunner } from './task-runner.js';
import type { Authenticate, IncomingRequest, Principal } from './principal.js';
import type { TaskStore } from './task-store.js';
import { AGENT_CARD_PATH } from './wire.js';

export interface ServeAgentOptions {
  /** Default 0: any free port (read it from the returned url). */
  port?: number;
  /** Default '127.0.0.1': a served agent is reachable from outside the machine only when told. */
  host?: string;
  /** Required. Who is calling, from the request (headers, client certificate); null answers 401. */
  authenticate(req: IncomingRequest): Principal | null | Promise<Principal | null>;
  /** Where the JSON-RPC endpoint is mounted. Default '/'. */
  path?: string;
  /** Largest request body accepted; a larger one is answered 413. Default 1 MiB. */
  maxBodyBytes?: number;
  /**
   * Where tasks are kept (in flight, paused, finished), with their bounds per principal and their
   * expiry. Default: a new `InMemoryTaskStore()` (this process's memory).
   */
  tasks?: TaskStore;
  /**
   * A streaming client must take what is written to it within this time: a stream whose writes
   * have not drained after it is ended, its buffers freed, and a run it was waiting on stopped as
   * if the client had hung up. Default 30_000.
   */
  streamWriteTimeoutMs?: number;
  /**
   * The URL callers reach the JSON-RPC endpoint at, as the agent card advertises it (behind a
   * proxy or a load balancer, say). Default: the address the server is bound to.
   */
  publicUrl?: string;
  /**
   * Serving a `symfonic/durable` runtime: the name of its agent whose trees are the tasks.
   * Required when the runtime has several agents; refused for a SymfonicAgent (it is the agent).
   */
  agent?: string;
}

export interface ResolvedServeOptions {
  port: number;
  host: string;
  authenticate: Authenticate;
  path: string;
  maxBodyBytes: number;
  tasks: TaskStore;
  streamWriteTimeoutMs: number;
  publicUrl: string | undefined;
  /** What runs the tasks: the agent in this process, or the durable runtime's trees. */
  runner: TaskRunner;
}

const schema = z
  .object({
    port: z.number().int().min(0).max(65535).optional(),
    host: z.string().min(1).optional(),
    authenticate: z.custom<Authenticate>((v) => typeof v === 'function', 'authenticate is required: a function (req) => Principal | null'),
    path: z
      .string()
      .regex(/^\/[A-Za-z0-9._~\-/]*$/, 'path must start with "/" and hold only URL path characters')
      .refine((p) => !p.includes(AGENT_CARD_PATH), 'path must not be the agent card path')
      .optional(),
    maxBodyBytes: z.number().int().positive().max(1024 * 1024 * 1024).optional(),
    tasks: checked<TaskStore>(isTaskStore, 'tasks must be a TaskStore, e.g. new InMemoryTaskStore({ maxPausedPerPrincipal: 100 })').optional(),
    streamWriteTimeoutMs: z.number().int().min(10).max(24 * 60 * 60 * 1000).optional(),
    publicUrl: z.url({ protocol: /^https?$/, error: 'publicUrl must be an http(s) URL, e.g. "https://agents.example.com/research"' }).optional(),
    agent: z.string().min(1).optional(),
  })
  .strict();

const STORE_METHODS = ['add', 'resumed', 'get', 'list', 'running'] as const;

function isTaskStore(v: unknown): boolean {
  return typeof v === 'object' && v !== null && STORE_METHODS.every((m) => typeof (v as Record<string, unknown>)[m] === 'function');
}

const DURABLE_EXAMPLE = "serveAgent(durable, { agent: 'planner', authenticate, tasks: new RedisTaskStore({ url: 'redis://127.0.0.1:6379', snapshotKey }) })";

/**
 * A durable runtime's tasks are trees any replica may finish, so their records must be shared
 * by the fleet (a RedisTaskStore), and the served agent must be one of the runtime's, named
 * when it has several.
 */
function durableTaskRunner(trees: DurableTrees, tasks: TaskStore | undefined, named: string | undefined): TaskRunner {
  if (!(tasks instanceof RedisTaskStore)) {
    throw new ConfigurationError(
      `serveAgent over a symfonic/durable runtime needs tasks: a RedisTaskStore every replica shares, so that a replica that finds a task whose replica died can take it over; ${tasks === undefined ? 'none was given' : 'the one given is not (an InMemoryTaskStore is this process\'s alone)'}. ${DURABLE_EXAMPLE}.`,
    );
  }
  const names = [...trees.agents.keys()];
  const name = named ?? (names.length === 1 ? names[0]! : undefined);
  if (name === undefined) throw new ConfigurationError(`serveAgent: this durable runtime runs trees of ${names.map((n) => `"${n}"`).join(', ')}; name the one to serve with agent. ${DURABLE_EXAMPLE}.`);
  const agent = trees.agents.get(name);
  if (agent === undefined) throw new ConfigurationError(`serveAgent: agent "${name}" is not one of this durable runtime's agents (${names.map((n) => `"${n}"`).join(', ')}). ${DURABLE_EXAMPLE}.`);
  if (!(agent instanceof SymfonicAgent)) throw new ConfigurationError(`serveAgent: the durable runtime's agent "${name}" is an Agent facade; serve a SymfonicAgent (its card is the agent's own). ${DURABLE_EXAMPLE}.`);
  return durableRunner(trees, name, agent);
}

function runnerFor(agent: unknown, tasks: TaskStore | undefined, named: string | undefined): TaskRunner {
  if (isDurableTrees(agent)) return durableTaskRunner(agent, tasks, named);
  if (named !== undefined) throw new ConfigurationError(`serveAgent options: agent names which of a durable runtime's agents is served; a SymfonicAgent is served as it is: drop agent ("${named}").`);
  return inProcessRunner(agent as SymfonicAgent);
}

export function resolveServeOptions(agent: unknown, options: unknown): ResolvedServeOptions {
  if (!(agent instanceof SymfonicAgent) && !isDurableTrees(agent)) {
    throw new ConfigurationError(
      'serveAgent serves a SymfonicAgent or a symfonic/durable runtime: serveAgent(new SymfonicAgent({ name, modelProvider, ... }), { authenticate }), or serveAgent(await startDurable({ ... }), { authenticate, tasks: new RedisTaskStore({ ... }) }).',
    );
  }
  if (typeof options === 'object' && options !== null && 'recentTasks' in options) {
    throw new ConfigurationError('serveAgent options: recentTasks is gone: tasks are bounded per principal by the task store: serveAgent(agent, { authenticate, tasks: new InMemoryTaskStore({ maxFinishedPerPrincipal: 1000 }) }).');
  }
  // An unknown key (a misspelt `agent`, say) is refused naming the keys there are: zod's "Unrecognized key" names none.
  if (typeof options === 'object' && options !== null) refuseUnknownKeys('serveAgent options', options, Object.keys(schema.shape));
  const parsed = schema.safeParse(options);
  if (!parsed.success) {
    throw new ConfigurationError(
      `serveAgent options: ${z.prettifyError(parsed.error)}. Example: serveAgent(agent, { port: 8080, authenticate: (req) => ` +
        `req.headers.authorization === 'Bearer s3cret' ? { principal: 'router', tenants: ['acme'] } : null }).`,
    );
  }
  const o = parsed.data;
  const runner = runnerFor(agent, o.tasks, o.agent);
  const path = o.path === undefined || o.path === '/' ? '/' : o.path.replace(/\/+$/, '');
  return { port: o.port ?? 0, host: o.host ?? '127.0.0.1', authenticate: o.authenticate, path, maxBodyBytes: o.maxBodyBytes ?? 1024 * 1024, tasks: o.tasks ?? new InMemoryTaskStore(),
    streamWriteTimeoutMs: o.streamWriteTimeoutMs ?? 30_000, publicUrl: o.publicUrl, runner };
}

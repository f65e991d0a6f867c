import { z, type ZodType } from 'zod';
import { ConfigurationError } from '../core/errors.js';
import { RunFailure } from '../run/run-outcome.js';
import type { RunFrame } from '../run/run-frame.js';
import type { ChildReserve } from '../accounting/accounting.js';
import type { ChildAgent, ChildRunOptions } from '../delegation/child.js';
import { declareChild, FOREIGN_CHILD } from '../delegation/child-door.js';
import { SubAgent } from '../delegation/sub-agent.js';
import { runInPlacement } from './child-door.js';
import { frameOfChildOptions } from '../run/run-projections.js';
import { RemoteHttp } from './http-client.js';
import { callRemote, type CallSettings } from './remote-call.js';
import { REMOTE_EVENT_LIMITS } from './remote-events.js';
import { RemotePaused, type RemoteResume } from './remote-pause.js';
import type { RemoteChildResponse } from './remote-response.js';
import { connect, type Connected } from './remote-card.js';
import { RemoteAgentError } from './remote-error.js';
import { TransportError } from './transport.js';
import type { ChildMemory } from '../session/session-memory.js';

export type { RemoteChildResponse } from './remote-response.js';

export interface RemoteChildOptions {
  name: string;
  /** The agent's base URL; its card is read from `${url}/.well-known/agent-card.json`. */
  url: string;
  description: string;
  whenToUse?: string;
  /** Sent with every call and with the card request, e.g. { authorization: 'Bearer …' }. */
  headers?: Record<string, string>;
  /** A call that takes longer is cancelled (CancelTask to the remote) and reads as aborted. Default 300_000 (5 minutes). */
  timeoutMs?: number;
  /** The remote's answer must be JSON matching this schema; run_agent then returns it as JSON. */
  outputType?: ZodType;
  /** The largest answer read (a stream: the largest event); past it the call is cut with a clear error. Default 16 MiB. */
  maxResponseBytes?: number;
  /**
   * Send this tree's lineage (tenant, run ids, depth, deadline) as baggage and activate symfonic's
   * usage-lineage extension: true always, false never. Default: when the agent's card declares
   * the extension. The W3C traceparent is sent either way.
   */
  lineage?: boolean;
  /** False: never stream, one answer a call, even when the agent streams. Default true. */
  stream?: boolean;
  /** What the call holds against the caller's budget while it runs (SubAgent reserve; default: the task plus 16,384 tokens). */
  reserve?: ChildReserve;
  /**
   * How much of a symfonic remote's run events one call may add to this tree's stream: runs
   * (default 1000), events (default 100,000) and their bytes (default 16 MiB). Past a bound the
   * remote runs end with `run.failed` (`RemoteEventsLimited`, saying which) and the rest is dropped;
   * the call itself goes on.
   */
  remoteEvents?: { maxRuns?: number; maxEvents?: number; maxBytes?: number };
  /**
   * 'session': in a run of a session, every call goes in one A2A context derived from the
   * caller's session and this child's name, so a served agent with sessions keeps the child's
   * conversation across the caller's turns. Default 'none': each call is a context of its own.
   */
  memory?: ChildMemory;
}

const REMOTE_DEFAULTS = Object.freeze({ timeoutMs: 300_000, maxResponseBytes: 16 * 1024 * 1024 });
/** Past this a string of the answer could no longer be made in V8: the limit can be raised to here, no further. */
const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const schema = z
  .object({
    name: z.string(),
    url: z.url({ protocol: /^https?$/ }),
    description: z.string(),
    whenToUse: z.string().optional(),
    headers: z.record(z.string().regex(HEADER_NAME, 'header names are HTTP tokens'), z.string()).optional(),
    timeoutMs: z.number().int().positive().max(2 ** 31 - 1).optional(),
    outputType: z.custom<ZodType>((v) => typeof (v as { safeParse?: unknown } | null)?.safeParse === 'function', 'outputType must be a zod schema').optional(),
    maxResponseBytes: z.number().int().min(1024).max(MAX_RESPONSE_BYTES, `maxResponseBytes can be at most ${MAX_RESPONSE_BYTES} (256 MiB)`).optional(),
    lineage: z.boolean().optional(),
    stream: z.boolean().optional(),
    // Checked where every child's is (SubAgent).
    reserve: z.unknown().optional(),
    remoteEvents: z
      .object({ maxRuns: z.number().int().positive().max(1_000_000).optional(), maxEvents: z.number().int().positive().max(100_000_000).optional(), maxBytes: z.number().int().positive().max(MAX_RESPONSE_BYTES).optional() })
      .strict()
      .optional(),
    memory: z.enum(['none', 'session'], "memory must be 'none' (each call its own context, the default) or 'session'").optional(),
  })
  .strict();

/** What a remote child declares: it goes on only from the remote task it paused on, and no ledger here sees its calls. */
const REMOTE_CHILD = Object.freeze({ ...FOREIGN_CHILD, resumable: true, remote: true });

function lowerCased(headers: Readonly<Record<string, string>> | undefined): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) out[k.toLowerCase()] = v;
  return Object.freeze(out);
}

/**
 * A child that runs in another process, reached over A2A. As a Child it starts in its placement's
 * frame (child-door.ts), and declares itself remote: its suspended runs are tasks on the server,
 * what a snapshot's remote wait resumes on (resume-roster.ts).
 */
export class RemoteChildAgent implements ChildAgent {
  private connected: Promise<Connected> | undefined;
  private readonly http = new RemoteHttp();
  private readonly settings: CallSettings;

  constructor(
    private readonly options: Readonly<RemoteChildOptions>,
    /** Not an option users set: the benchmark's way to time the SDK's client on the same server. */
    private readonly internal: { viaSdk?: boolean } = {},
  ) {
    this.settings = {
      name: options.name,
      headers: lowerCased(options.headers),
      timeoutMs: options.timeoutMs ?? REMOTE_DEFAULTS.timeoutMs,
      lineage: options.lineage,
      remoteEvents: Object.freeze({ ...REMOTE_EVENT_LIMITS, ...options.remoteEvents }),
      remembers: options.memory === 'session',
    };
    declareChild(this, { name: options.name, declares: REMOTE_CHILD, start: (task, placement) => runInPlacement(this, task, placement) });
  }

  /** Drops the kept-alive connections to the remote. */
  close(): void {
    this.http.close();
  }

  /** The transport, settled once from the remote's card; a failed attempt is forgotten so the next call retries. */
  private connect(): Promise<Connected> {
    this.connected ??= connect(this.http, {
      url: this.options.url,
      headers: this.settings.headers,
      maxResponseBytes: this.options.maxResponseBytes ?? REMOTE_DEFAULTS.maxResponseBytes,
      stream: this.options.stream !== false,
      viaSdk: this.internal.viaSdk === true,
    });
    this.connected.catch(() => (this.connected = undefined));
    return this.connected;
  }

  /** `remembers`: its delegator placed it with SubAgent memory 'session' (as this child's own memory option does). */
  async call(task: string, frame: RunFrame, resume?: RemoteResume, remembers = false): Promise<RemoteChildResponse | RemotePaused> {
    let connected: Connected;
    try {
      connected = await this.connect();
    } catch (error) {
      const status = error instanceof TransportError ? error.status : undefined;
      throw new RemoteAgentError(this.options.name, error instanceof Error ? error.message : String(error), { cause: error, ...(status !== undefined ? { status } : {}) });
    }
    return callRemote(connected, remembers && !this.settings.remembers ? { ...this.settings, remembers } : this.settings, task, frame, resume);
  }

  get name(): string {
    return this.options.name;
  }

  /** A call composed by hand, outside a delegating run: the options spell the frame, and a failure rejects as its own error. */
  async run(task: string, options: ChildRunOptions): Promise<RemoteChildResponse> {
    let answer: RemoteChildResponse | RemotePaused;
    try {
      // Composed by hand, no snapshot will hold the pause: the remote task is cancelled instead.
      answer = await this.call(task, { ...frameOfChildOptions(options), resumable: false });
    } catch (error) {
      throw error instanceof RunFailure ? error.error : error;
    }
    if (answer instanceof RemotePaused) throw new RemoteAgentError(this.name, 'the remote task paused for input outside a delegating run');
    return answer;
  }
}

/**
 * A child for `subAgents` that runs elsewhere, behind an A2A endpoint: a symfonic agent served
 * with serveAgent (joins this run's trace, lineage, ledger, deadline and event stream) or any A2A
 * agent (a leaf whose usage is estimated).
 */
export function remoteChild(options: RemoteChildOptions): SubAgent {
  const parsed = schema.safeParse(options);
  if (!parsed.success) {
    throw new ConfigurationError(
      `remoteChild options: ${z.prettifyError(parsed.error)}. Example: remoteChild({ name: 'researcher', url: 'http://127.0.0.1:8080', ` +
        `description: 'Finds sources', headers: { authorization: 'Bearer …' }, timeoutMs: 60_000 }).`,
    );
  }
  const frozen = Object.freeze({ ...options, ...(options.headers ? { headers: Object.freeze({ ...options.headers }) } : {}) });
  const agent = new RemoteChildAgent(frozen);
  // The answer's structure is checked where every child's is (the delegator, through SubAgent).
  return new SubAgent({
    name: options.name,
    agent,
    description: options.description,
    ...(options.whenToUse !== undefined ? { whenToUse: options.whenToUse } : {}),
    ...(options.outputType !== undefined ? { outputType: options.outputType } : {}),
    ...(options.reserve !== undefined ? { reserve: options.reserve } : {}),
  });
}

import { randomUUID } from 'node:crypto';
import type { Message, Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { z, type ZodType } from 'zod';
import { BudgetExceededError, ConfigurationError, abortErrorFrom, isAbortError } from '../core/errors.js';
import { RunFailure, type Receipt } from '../core/run-outcome.js';
import type { Usage } from '../core/usage.js';
import type { ChildAgent, ChildResponse, ChildRunOptions } from '../delegation/child.js';
import { foreignSpent } from '../delegation/child-answer.js';
import type { ChildOutcome, FramedChild, Placement } from '../delegation/framed-child.js';
import { SubAgent } from '../delegation/sub-agent.js';
import { childRunOptions } from '../delegation/wrapped-child.js';
import { outgoingHeaders } from './outgoing-headers.js';
import { remoteAnswer, type RemoteAnswer } from './remote-answer.js';
import { PLAIN_HEADERS, lowerCased, plainAnswer, plainEndpoint, plainRequest, type PlainEndpoint } from './plain-call.js';
import { RemoteAgentError } from './remote-error.js';
import { NodeFetch } from './node-fetch.js';
import { loadClientSdk, loadCoreSdk, type CoreSdk } from './sdk.js';
import { absorbedUsage } from './usage-report.js';

export interface RemoteChildOptions {
  name: string;
  /** The agent's base URL; its card is read from `${url}/.well-known/agent-card.json`. */
  url: string;
  description: string;
  whenToUse?: string;
  /** Sent with every call and with the card request, e.g. { authorization: 'Bearer …' }. */
  headers?: Record<string, string>;
  /** A call that takes longer is cancelled (the remote run is aborted) and reads as aborted. */
  timeoutMs?: number;
  /** The remote's answer must be JSON matching this schema; run_agent then returns it as JSON. */
  outputType?: ZodType;
}

/** What a remote child answers: a ChildResponse, plus the store the remote side charged. */
export interface RemoteChildResponse extends ChildResponse {
  finalResponse: string;
  totalUsage: Usage;
  totalCostUsd: number | null;
  /** The remote's receipt (its ledger and budget store ids, its tenant), when it is a symfonic agent. */
  accounting?: Receipt;
  output?: unknown;
}

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
  })
  .strict();

interface Connected {
  client: Client;
  core: CoreSdk;
  plain: PlainEndpoint | undefined;
}

/** A child that runs in another process, reached over A2A's JSON-RPC binding. */
export class RemoteChildAgent implements ChildAgent, FramedChild {
  private client: Promise<Connected> | undefined;
  private readonly http = new NodeFetch();
  private readonly plainHeaders: Readonly<Record<string, string>>;

  constructor(private readonly options: Readonly<RemoteChildOptions>) {
    this.plainHeaders = lowerCased(options.headers);
  }

  /** Drops the kept-alive connections to the remote. */
  close(): void {
    this.http.close();
  }

  /** The call through the SDK's client: any interface other than JSON-RPC at A2A 1.0. */
  private viaSdk(client: Client, task: string, serviceParameters: Record<string, string>, signal: AbortSignal | undefined): Promise<Message | Task> {
    return client.sendMessage(
      {
        tenant: '',
        message: { messageId: randomUUID(), contextId: '', taskId: '', role: 1, parts: [{ content: { $case: 'text', value: task }, mediaType: 'text/plain', filename: '', metadata: undefined }], metadata: undefined, extensions: [], referenceTaskIds: [] },
        configuration: { acceptedOutputModes: ['text/plain', 'application/json'], taskPushNotificationConfig: undefined, returnImmediately: false },
        metadata: undefined,
      },
      signal ? { signal, serviceParameters } : { serviceParameters },
    );
  }

  /**
   * The client, made once from the remote's card, and the plain JSON-RPC 1.0 endpoint when the
   * client settled on one; a failed attempt is forgotten so the next call retries.
   */
  private connect(): Promise<Connected> {
    this.client ??= (async () => {
      const [sdk, core] = await Promise.all([loadClientSdk(), loadCoreSdk()]);
      const extra = this.options.headers ?? {};
      const send = this.http.fetch;
      const cardFetch: typeof fetch = (input, init) => send(input, { ...init, headers: { ...extra, ...Object.fromEntries(new Headers(init?.headers)) } });
      const factory = new sdk.ClientFactory({
        transports: [new sdk.JsonRpcTransportFactory({ legacyCompat: { enabled: true }, fetchImpl: send }), new sdk.RestTransportFactory({ legacyCompat: { enabled: true }, fetchImpl: send })],
        preferredTransports: ['JSONRPC'],
        cardResolver: new sdk.DefaultAgentCardResolver({ fetchImpl: cardFetch, legacyCompat: { enabled: true } }),
      });
      const client = await factory.createFromUrl(this.options.url);
      return { client, core, plain: plainEndpoint(client) };
    })();
    this.client.catch(() => (this.client = undefined));
    return this.client;
  }

  /**
   * The child door: the call carries the frame as W3C headers, and the answer (or the failed
   * task) comes back as the child's outcome, charged under the run id this side gave the child.
   */
  async runInFrame(task: string, placement: Placement): Promise<ChildOutcome> {
    const runId = placement.frame.runId;
    if (placement.resume !== undefined) throw new RunFailure(new ConfigurationError(`remote agent "${this.options.name}" cannot go on from a snapshot: a remote child never suspends.`), foreignSpent(runId, task, ''));
    try {
      const r = await this.run(task, childRunOptions(placement.frame));
      return { runId, finalResponse: r.finalResponse, totalUsage: r.totalUsage, totalCostUsd: r.totalCostUsd, accounting: r.accounting };
    } catch (error) {
      if (error instanceof RunFailure) throw new RunFailure(error.error, { ...error.spent, runId });
      // No report of what the remote spent: estimated from the task, never 0.
      throw new RunFailure(error, foreignSpent(runId, task, ''));
    }
  }

  async run(task: string, options: ChildRunOptions): Promise<RemoteChildResponse> {
    const name = this.options.name;
    const timeout = this.options.timeoutMs === undefined ? undefined : AbortSignal.timeout(this.options.timeoutMs);
    const signal = timeout && options.signal ? AbortSignal.any([options.signal, timeout]) : (timeout ?? options.signal);
    let answer: RemoteAnswer;
    try {
      const { client, core, plain } = await this.connect();
      signal?.throwIfAborted();
      const trace = outgoingHeaders(options, this.options.timeoutMs);
      if (plain !== undefined) {
        const id = plain.nextId();
        const headers = { ...this.plainHeaders, ...trace, ...PLAIN_HEADERS };
        answer = plainAnswer(core, name, id, await this.http.post(plain.target, headers, plainRequest(id, randomUUID(), task), signal));
      } else {
        answer = remoteAnswer(name, await this.viaSdk(client, task, { ...this.options.headers, ...trace }, signal));
      }
    } catch (error) {
      if (options.signal?.aborted) throw abortErrorFrom(options.signal, `remote agent "${name}"`);
      if (timeout?.aborted) throw Object.assign(new RemoteAgentError(name, `no answer within ${this.options.timeoutMs} ms; the call was cancelled`, { cause: error }), { name: 'TimeoutError' });
      if (isAbortError(error) || error instanceof BudgetExceededError || error instanceof RemoteAgentError || error instanceof RunFailure) throw error;
      throw new RemoteAgentError(name, error instanceof Error ? error.message : String(error), { cause: error });
    }
    const usage = absorbedUsage(answer.metadata, task, answer.text);
    const response: RemoteChildResponse = {
      finalResponse: answer.text,
      totalUsage: usage.totalUsage,
      totalCostUsd: usage.totalCostUsd,
    };
    if (usage.receipt !== undefined) response.accounting = usage.receipt;
    if (usage.runId !== undefined) response.runId = usage.runId;
    return response;
  }
}

/**
 * A child for `subAgents` that runs elsewhere, behind an A2A endpoint: a symfonic agent served
 * with serveAgent (joins this run's trace, lineage, ledger and deadline) or any A2A agent (a leaf
 * whose usage is estimated).
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
  });
}

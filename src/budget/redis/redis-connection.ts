import { randomUUID } from 'node:crypto';
import { SymfonicError } from '../../core/errors.js';
import type { Logger } from '../../observability/logger.js';
// Types only: ioredis itself is imported on first use, and only when the store is given a URL.
import type { Cluster, Redis } from 'ioredis';
import type { BudgetScript } from './redis-budget-scripts.js';

const BACKOFF_FIRST_MS = 50;
const BACKOFF_MAX_MS = 1000;

/** Replies that mean "this server cannot serve now", not "this command is wrong". */
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|READONLY|NOREPLICAS)\b/;

/** Whether an error means Redis could not be reached or could not answer, rather than a bug. */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return true;
  if (error.name === 'ReplyError') return TRANSIENT_REPLY.test(error.message);
  return !(error instanceof TypeError || error instanceof RangeError || error instanceof SymfonicError);
}

export type RedisClient = Redis | Cluster;

export const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export interface ConnectionSettings {
  /** What the store is called in messages: its address, without credentials. */
  readonly name: string;
  readonly keyPrefix: string;
  readonly timeoutMs: number;
  readonly log: Logger;
  /** How the store reacts when Redis is unreachable, named in the first outage's log line. */
  readonly onUnavailable: string;
  /** Called when Redis is reachable again (a new connection, or a call that succeeds after failures). */
  readonly onBack: () => void;
}

/**
 * One store's way to Redis: the client (made from a URL on first use, or given), waiting for the
 * first connection, a time bound on every command, scripts run by SHA with the text sent again
 * to a server that lost them, outages noted once and recoveries announced, and the id of the
 * data learnt from Redis. The store above decides what an outage means for a call.
 */
export class RedisConnection {
  private client: RedisClient | undefined;
  private connecting: Promise<RedisClient> | undefined;
  private everReady = false;
  private firstReady: Promise<void> | undefined;
  private failures = 0;
  private dataId: string | undefined;
  private learning: Promise<void> | undefined;
  private readonly onReady = (): void => {
    this.everReady = true;
    void this.learnIdentity();
    this.settings.onBack();
  };
  private readonly onError = (error: unknown): void => {
    this.settings.log.debug({ store: this.settings.name, err: describe(error) }, 'budget store connection error');
  };

  /**
   * @param url set when the store makes (and so configures and closes) its client
   * @param clientTimesOut whether the client rejects a command that takes too long by itself
   */
  constructor(
    private readonly settings: ConnectionSettings,
    private readonly url: string | undefined,
    given: RedisClient | undefined,
    private readonly clientTimesOut: boolean,
  ) {
    if (given !== undefined) this.attach(given);
  }

  /** Whether a client exists yet: nothing to flush or close before the store was first used. */
  get started(): boolean {
    return this.client !== undefined || this.connecting !== undefined;
  }

  /** The id of the data, once learnt from Redis (see RedisBudgetStore.id). */
  get id(): string | undefined {
    return this.dataId;
  }

  /** Runs a script by its SHA; a server that lacks it (restarted, flushed) gets the text once more. */
  async eval(script: BudgetScript, keys: readonly string[], args: readonly string[]): Promise<{ reply: unknown; client: RedisClient }> {
    const client = this.client !== undefined && this.everReady ? this.client : await this.ready();
    // Until the data's id is known nothing is skipped as already charged here; a learn that
    // failed is tried again on the next call (concurrent ones share one).
    if (this.dataId === undefined) void this.learnIdentity();
    let reply: unknown;
    try {
      reply = await this.bounded(client.evalsha(script.sha, script.keys, ...keys, ...args));
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw this.failed(script.name, error);
      try {
        reply = await this.bounded(client.eval(script.lua, script.keys, ...keys, ...args));
      } catch (again) {
        throw this.failed(script.name, again);
      }
    }
    if (this.failures > 0) this.recovered();
    return { reply, client };
  }

  /** A client that has connected once. A made client is waited for on first use; after that a lost connection fails fast. */
  async ready(): Promise<RedisClient> {
    const client = this.client ?? (await (this.connecting ??= this.open()));
    if (this.dataId === undefined && client.status === 'ready') void this.learnIdentity();
    if (this.url === undefined || this.everReady || client.status === 'ready') {
      this.everReady ||= client.status === 'ready';
      return client;
    }
    if (client.status === 'end' || client.status === 'close') return client;
    await (this.firstReady ??= this.waitForReady(client));
    return client;
  }

  /** A client passed in without a commandTimeout may queue forever, so its commands get ours. */
  bounded<T>(p: Promise<T>): Promise<T> {
    if (this.clientTimesOut) return p;
    let timer: NodeJS.Timeout;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer within ${this.settings.timeoutMs} ms`)), this.settings.timeoutMs);
    });
    return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
  }

  /** Stops listening, and quits the client if the store made it (a client passed in is left open). */
  async close(): Promise<void> {
    const client = this.client;
    if (!client) return;
    client.off('ready', this.onReady);
    client.off('error', this.onError);
    if (this.url !== undefined) await client.quit().catch(() => client.disconnect());
  }

  private failed(operation: string, error: unknown): unknown {
    if (isUnavailable(error) && this.failures++ === 0) {
      const { log, name, onUnavailable } = this.settings;
      log.error({ store: name, operation, err: describe(error) }, `budget store unreachable (onUnavailable: '${onUnavailable}'); it reconnects by itself`);
    }
    return error;
  }

  private recovered(): void {
    this.settings.log.info({ store: this.settings.name, failed_calls: this.failures }, 'budget store reachable again');
    this.failures = 0;
    this.settings.onBack();
  }

  private learnIdentity(): Promise<void> {
    if (this.dataId !== undefined || this.client === undefined) return Promise.resolve();
    const client = this.client;
    return (this.learning ??= (async () => {
      try {
        const key = `${this.settings.keyPrefix}store-id`;
        await this.bounded(client.set(key, `redis:${randomUUID()}`, 'NX'));
        const id = await this.bounded(client.get(key));
        if (typeof id === 'string') this.dataId = id;
      } catch {
        // Unreachable now: learnt on the next connection or call.
      } finally {
        this.learning = undefined;
      }
    })());
  }

  /** One wait shared by every call that arrives before the first connection, bounded by timeoutMs. */
  private waitForReady(client: RedisClient): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        client.off('ready', done);
        this.firstReady = undefined;
        resolve();
      };
      const timer = setTimeout(done, this.settings.timeoutMs);
      client.once('ready', done);
    });
  }

  private async open(): Promise<RedisClient> {
    const { Redis } = await import('ioredis');
    const timeoutMs = this.settings.timeoutMs;
    const client = new Redis(this.url!, {
      lazyConnect: true,
      // Fail fast while disconnected instead of queueing: the store decides (deny, allow, keep).
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      commandTimeout: timeoutMs,
      connectTimeout: Math.max(timeoutMs, 1000),
      retryStrategy: (times: number) => Math.min(BACKOFF_FIRST_MS * 2 ** Math.min(times, 5), BACKOFF_MAX_MS),
    });
    this.attach(client);
    // A failed first connect is not final: ioredis keeps retrying, and calls report the outage.
    client.connect().catch(() => undefined);
    return client;
  }

  private attach(client: RedisClient): void {
    this.client = client;
    client.on('ready', this.onReady);
    client.on('error', this.onError);
    if (client.status === 'ready') {
      // Connected already: no 'ready' event will come to learn the data's id from.
      this.everReady = true;
      void this.learnIdentity();
    }
  }
}

import type { Logger } from '../../observability/logger.js';
// Types only: ioredis itself is imported on first use, and only when the store is given a URL.
import type { Cluster, Redis } from 'ioredis';
import type { BudgetScript } from './redis-budget-scripts.js';
import { RedisOutage, describe, isUnavailable, outage } from './redis-words.js';

export { describe, isUnavailable } from './redis-words.js';

const BACKOFF_FIRST_MS = 50;
const BACKOFF_MAX_MS = 1000;
/**
 * How long a store's first call waits for its first connection (timeoutMs if longer). A busy
 * machine starting many processes at once can take seconds to connect; a refused connection
 * ends the wait at once, so an outage is still said without delay.
 */
const FIRST_CONNECT_MS = 5000;

export type RedisClient = Redis | Cluster;

export interface ConnectionSettings {
  /** What the store is called in messages: its address and prefix, without credentials. */
  readonly name: string;
  /** redis://host:port, without credentials: where outages are said to be. */
  readonly address: string;
  readonly timeoutMs: number;
  readonly log: Logger;
  /** How the store reacts when Redis is unreachable, named in the first outage's log line. */
  readonly onUnavailable: string;
  /** Called when Redis is reachable again (a new connection, or a call that succeeds after failures). */
  readonly onBack: () => void;
  /** Called on every (re)connection, to check the data is still the data the store knew. */
  readonly onConnect: (client: RedisClient) => void;
}

/**
 * One store's way to Redis: the client (made from a URL on first use, or given), waiting for the
 * first connection, a time bound on every call, scripts run by SHA with the text sent again to a
 * server that lost them, outages said in our words and noted once, and recoveries announced. The
 * store above decides what an outage means for a call.
 */
export class RedisConnection {
  private client: RedisClient | undefined;
  private connecting: Promise<RedisClient> | undefined;
  private everReady = false;
  private firstReady: Promise<void> | undefined;
  private failures = 0;
  private lastSocketError: unknown;
  private readonly onReady = (): void => {
    this.everReady = true;
    this.lastSocketError = undefined;
    this.settings.onConnect(this.client!);
    this.settings.onBack();
  };
  private readonly onError = (error: unknown): void => {
    this.lastSocketError = error;
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

  get isCluster(): boolean {
    return (this.client as { isCluster?: boolean } | undefined)?.isCluster === true;
  }

  /** The client once it has connected: for what may be skipped while it has not. */
  get connected(): RedisClient | undefined {
    return this.everReady ? this.client : undefined;
  }

  /**
   * Runs a script by its SHA (a server that lacks it, restarted or flushed, gets the text once
   * more) within `boundMs`, and resolves to its reply. The first call also waits for the first
   * connection, up to timeoutMs, before its bound starts. An outage rejects with a RedisOutage in
   * our words. Once connected, a call is the client's own promise and one step more: every
   * layer of promises here is paid on each budget call.
   */
  eval(script: BudgetScript, keys: readonly string[], args: readonly string[], boundMs = this.settings.timeoutMs): Promise<unknown> {
    const client = this.client !== undefined && this.everReady ? this.client : undefined;
    if (client === undefined) return this.ready().then((c) => this.evalOn(c, script, keys, args, boundMs));
    return this.evalOn(client, script, keys, args, boundMs);
  }

  private evalOn(client: RedisClient, script: BudgetScript, keys: readonly string[], args: readonly string[], boundMs: number): Promise<unknown> {
    const run = () =>
      client.evalsha(script.sha, keys.length, ...keys, ...args).then(
        (reply) => this.answered(reply),
        (error: unknown) => {
          if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw this.failed(script.name, error);
          return client.eval(script.lua, keys.length, ...keys, ...args).then(
            (reply) => this.answered(reply),
            (again: unknown) => {
              throw this.failed(script.name, again);
            },
          );
        },
      );
    return this.within(boundMs, run);
  }

  private answered(reply: unknown): unknown {
    if (this.failures > 0) this.recovered();
    return reply;
  }

  /**
   * Any other command, bounded and said in our words like a script. Connected, it is sent at once,
   * as a script is: commands and scripts called in turn reach Redis in that order.
   */
  async command<T>(operation: string, run: (client: RedisClient) => Promise<T>, boundMs = this.settings.timeoutMs): Promise<T> {
    const client = this.client !== undefined && this.everReady ? this.client : await this.ready();
    return this.within(boundMs, async () => {
      try {
        return await run(client);
      } catch (error) {
        throw this.failed(operation, error);
      }
    });
  }

  /** A client that has connected once. A made client is waited for on first use; after that a lost connection fails fast. */
  async ready(): Promise<RedisClient> {
    const client = this.client ?? (await (this.connecting ??= this.open()));
    if (this.url === undefined || this.everReady || client.status === 'ready') {
      this.everReady ||= client.status === 'ready';
      return client;
    }
    if (client.status === 'end' || client.status === 'close') return client;
    await (this.firstReady ??= this.waitForReady(client));
    return client;
  }

  /** Stops listening, and quits the client if the store made it (a client passed in is left open). */
  async close(): Promise<void> {
    const client = this.client;
    if (!client) return;
    client.off('ready', this.onReady);
    client.off('error', this.onError);
    if (this.url !== undefined) await client.quit().catch(() => client.disconnect());
  }

  /** Runs `work` with a deadline: past it the call rejects as an outage, whatever the client does. */
  private within<T>(boundMs: number, work: () => Promise<T>): Promise<T> {
    // Connected, with the client's own per-command timeout at our bound: no timer of ours needed
    // (one a call would cost every model call a timer).
    if (this.clientTimesOut && this.everReady && boundMs >= this.settings.timeoutMs) return work();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(this.failed('call', new RedisOutage(`timed out after ${boundMs} ms at ${this.settings.address}`))), boundMs);
    });
    const run = work();
    run.catch(() => undefined);
    return Promise.race([run, late]).finally(() => clearTimeout(timer));
  }

  /** The error in our words; the first of an outage is logged. */
  private failed(operation: string, error: unknown): unknown {
    if (!isUnavailable(error)) return error;
    const said = outage(error, this.settings.address, this.settings.timeoutMs, this.lastSocketError);
    if (this.failures++ === 0) {
      const { log, name, onUnavailable } = this.settings;
      log.error({ store: name, operation, err: said.message }, `budget store unreachable (onUnavailable: '${onUnavailable}'); it reconnects by itself`);
    }
    return said;
  }

  private recovered(): void {
    this.settings.log.info({ store: this.settings.name, failed_calls: this.failures }, 'budget store reachable again');
    this.failures = 0;
    this.settings.onBack();
  }

  /** One wait shared by every call that arrives before the first connection: until it is ready, fails, or FIRST_CONNECT_MS pass. */
  private waitForReady(client: RedisClient): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        client.off('ready', done);
        client.off('error', done);
        this.firstReady = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(this.settings.timeoutMs, FIRST_CONNECT_MS));
      client.once('ready', done);
      client.once('error', done);
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
      connectTimeout: Math.max(timeoutMs, FIRST_CONNECT_MS),
      retryStrategy: (times: number) => Math.min(BACKOFF_FIRST_MS * 2 ** Math.min(times, 5), BACKOFF_MAX_MS),
    });
    this.attach(client);
    // A failed first connect is not final: ioredis keeps retrying, and calls report the outage.
    client.connect().catch((error: unknown) => {
      this.lastSocketError ??= error;
    });
    return client;
  }

  private attach(client: RedisClient): void {
    this.client = client;
    client.on('ready', this.onReady);
    client.on('error', this.onError);
    if (client.status === 'ready') {
      // Connected already: no 'ready' event will come.
      this.everReady = true;
      this.settings.onConnect(client);
    }
  }
}

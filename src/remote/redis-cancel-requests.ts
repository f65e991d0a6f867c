import type { RedisClient, RedisConnection } from '../budget/redis/redis-connection.js';
import type { Logger } from '../observability/logger.js';

/** What a cancel request names: the task and its principal (only the owner's own task is stopped). */
interface CancelRequest {
  id: string;
  owner: string;
}

/**
 * CancelTask across replicas: a replica asked to cancel a task another runs publishes the request
 * on the fleet's channel; the replica running it (subscribed while it runs any task) stops the
 * run, which files the task cancelled. A request published while the running replica is
 * reconnecting is lost: its caller's CancelTask then waits until the run ends or its lease lapses.
 */
export class RedisCancelRequests {
  private subscriber: Promise<RedisClient> | undefined;

  constructor(
    private readonly connection: RedisConnection,
    private readonly channel: string,
    private readonly log: Logger,
    /** Stops the run of task `id` if this replica runs it for `owner`. */
    private readonly onRequest: (id: string, owner: string) => void,
  ) {}

  /** Listens (from the first call on), resolving once subscribed: a request for a run started after it is heard. Never rejects. */
  async listen(): Promise<void> {
    const sub = (this.subscriber ??= this.subscribe());
    try {
      await sub;
    } catch (error) {
      this.log.error({ channel: this.channel, err: error }, 'RedisTaskStore: cannot listen for cancel requests; CancelTask from another replica will not reach this one');
      if (this.subscriber === sub) this.subscriber = undefined;
    }
  }

  private async subscribe(): Promise<RedisClient> {
    // Subscribed, a connection takes no other command: the listener has its own.
    const made = (await this.connection.ready()) as unknown as { duplicate(override: object): RedisClient };
    // Connected now and kept connected: a store's own client connects lazily and queues nothing.
    const client = made.duplicate({ lazyConnect: false, enableOfflineQueue: true, maxRetriesPerRequest: null });
    client.on('error', () => undefined);
    client.on('message', (_channel: string, raw: string) => {
      try {
        const r = JSON.parse(raw) as CancelRequest;
        if (typeof r.id === 'string' && typeof r.owner === 'string') this.onRequest(r.id, r.owner);
      } catch {
        // Not a request of ours: nothing to stop.
      }
    });
    await client.subscribe(this.channel);
    return client;
  }

  /** Asks the replica running `id` to stop it. */
  async request(id: string, owner: string): Promise<void> {
    await this.connection.command('publish', (c) => c.publish(this.channel, JSON.stringify({ id, owner } satisfies CancelRequest)));
  }

  async close(): Promise<void> {
    const sub = this.subscriber;
    this.subscriber = undefined;
    if (sub !== undefined) await sub.then((c) => c.quit()).catch(() => undefined);
  }
}

import type { RedisClient, RedisConnection } from '../budget/redis/redis-connection.js';
import type { Logger } from '../observability/logger.js';
import type { WireEvent } from './served-events.js';

/** What a cancel request names: the task and its principal (only the owner's own task is stopped). */
interface CancelRequest {
  id: string;
  owner: string;
}

/** A stream on this replica watching a task another runs: its run events as they come, and that the task was filed (paused or ended). */
export interface ChannelWatcher {
  events(events: readonly WireEvent[]): void;
  filed(): void;
}

/**
 * What replicas tell each other through Redis pub/sub. CancelTask: a replica asked to cancel a
 * task another runs publishes the request on the fleet's cancel channel; the replica running it
 * (subscribed while it runs any task) stops the run, which files the task cancelled. Run events:
 * the replica running a task publishes each batch its tree emits (when the run streams events) on
 * the task's own channel, which a stream watching it on another replica subscribes to; the script
 * that files the task (paused or ended) publishes {"filed":true} there after them. A message
 * published while a subscriber is reconnecting is lost: a lost cancel leaves its CancelTask waiting
 * until the run ends or its lease lapses; lost events are missing from that stream.
 */
export class RedisTaskChannels {
  private subscriber: Promise<RedisClient> | undefined;
  private readonly eventWatchers = new Map<string, Set<ChannelWatcher>>();

  constructor(
    private readonly connection: RedisConnection,
    /** The fleet's channels start with this (the store's key prefix). */
    private readonly prefix: string,
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
      this.log.error({ channel: this.cancelChannel, err: error }, 'RedisTaskStore: cannot listen for cancel requests; CancelTask from another replica will not reach this one');
      if (this.subscriber === sub) this.subscriber = undefined;
    }
  }

  private async subscribe(): Promise<RedisClient> {
    // Subscribed, a connection takes no other command: the listener has its own.
    const made = (await this.connection.ready()) as unknown as { duplicate(override: object): RedisClient };
    // Connected now and kept connected: a store's own client connects lazily and queues nothing.
    const client = made.duplicate({ lazyConnect: false, enableOfflineQueue: true, maxRetriesPerRequest: null });
    client.on('error', () => undefined);
    client.on('message', (channel: string, raw: string) => {
      if (channel !== this.cancelChannel) return this.heard(channel, raw);
      try {
        const r = JSON.parse(raw) as CancelRequest;
        if (typeof r.id === 'string' && typeof r.owner === 'string') this.onRequest(r.id, r.owner);
      } catch {
        // Not a request of ours: nothing to stop.
      }
    });
    await client.subscribe(this.cancelChannel);
    return client;
  }

  /** Asks the replica running `id` to stop it. */
  async request(id: string, owner: string): Promise<void> {
    await this.connection.command('publish', (c) => c.publish(this.cancelChannel, JSON.stringify({ id, owner } satisfies CancelRequest)));
  }

  private get cancelChannel(): string {
    return `${this.prefix}:cancel`;
  }

  /** A task's events channel: named by a hash of its principal and its id, so only its own watchers hear it. */
  private eventsChannel(id: string, tag: string): string {
    return `${this.prefix}:events:${tag}:${id}`;
  }

  /** Tells the task's watchers on other replicas of a batch of its run events; never waits, never fails the run. */
  publishEvents(id: string, tag: string, events: readonly WireEvent[]): void {
    const channel = this.eventsChannel(id, tag);
    this.connection.command('publish', (c) => c.publish(channel, JSON.stringify(events))).catch(() => undefined);
  }

  /** Hears the run events the replica running the task publishes, and its filing, from once subscribed; returns how to stop. */
  async watchEvents(id: string, tag: string, fn: ChannelWatcher): Promise<() => void> {
    const channel = this.eventsChannel(id, tag);
    await this.listen();
    const client = await this.subscriber;
    let set = this.eventWatchers.get(channel);
    if (set === undefined) {
      this.eventWatchers.set(channel, (set = new Set()));
      await client?.subscribe(channel);
    }
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size > 0 || this.eventWatchers.get(channel) !== set) return;
      this.eventWatchers.delete(channel);
      void client?.unsubscribe(channel).catch(() => undefined);
    };
  }

  private heard(channel: string, raw: string): void {
    const watchers = this.eventWatchers.get(channel);
    if (watchers === undefined) return;
    let message: unknown;
    try {
      message = JSON.parse(raw);
    } catch {
      return;
    }
    if (Array.isArray(message)) for (const w of watchers) w.events(message as WireEvent[]);
    else if ((message as { filed?: unknown } | null)?.filed === true) for (const w of watchers) w.filed();
  }

  async close(): Promise<void> {
    const sub = this.subscriber;
    this.subscriber = undefined;
    if (sub !== undefined) await sub.then((c) => c.quit()).catch(() => undefined);
  }
}

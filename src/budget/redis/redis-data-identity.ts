import { randomUUID } from 'node:crypto';
import type { Logger } from '../../observability/logger.js';
import type { ConfigurationError } from '../../core/errors.js';
import { dataIdKey, dataLostKey } from './redis-budget-keys.js';
import type { RedisClient } from './redis-connection.js';
import { evictionRefusal, readEvictionPolicy } from './redis-eviction-policy.js';
import { RedisOutage } from './redis-words.js';

/** What a store found when the data it knew was gone. */
export interface DataLoss {
  /** The data id the store knew. */
  readonly lost: string;
  /** The id found instead ('' when none was there: a restart without persistence, FLUSHALL). */
  readonly found: string;
  readonly at: number;
}

/** Where a store's data id lives and what it does on a loss. */
export interface DataIdentitySettings {
  readonly keyPrefix: string;
  /** The store's name, in its log lines and the loss marker. */
  readonly name: string;
  readonly log: Logger;
  readonly onLoss: (loss: DataLoss) => void;
  /** The store's allowKeyEviction: a policy that may evict keys is logged, not refused. */
  readonly allowKeyEviction: boolean;
}

/** How often a store re-reads the data id (and the loss marker) while it serves calls. */
const CHECK_EVERY_MS = 1000;

/**
 * The data a store writes to, named by a random id kept at `<prefix>store-id`: learnt on first
 * contact (and written there by the first store ever to write, SET NX), checked inside every
 * reserve (single server) and re-read on every reconnection and once a second, so a store whose
 * data vanished (a restart without persistence, FLUSHALL, a failover to an empty replica) finds
 * out instead of counting every tenant from zero. A store that finds it logs an error, counts it,
 * leaves `<prefix>data-lost` for the rest of the fleet and for operators, and takes the new id.
 * While that marker is there, stores with onUnavailable 'deny' refuse; deleting it (after
 * restoring the data, or to accept the loss) lets them go on. Also learns how far the server's
 * clock is from this process's, to tell the reserve script when the caller gives up, and reads
 * the server's maxmemory-policy with the id (a policy that may evict the data loses it too, key by
 * key, with the id possibly left in place: see redis-eviction-policy.ts).
 */
export class DataIdentity {
  private known: string | undefined;
  private learning: Promise<void> | undefined;
  private lastCheck = 0;
  private offset: number | undefined;
  private policy: string | undefined;
  /** Why reserves are refused while the server's policy may evict the store's keys (as last read). */
  evictionRefusal: ConfigurationError | undefined;
  /** Set while the loss marker is there (as last read). */
  loss: DataLoss | undefined;

  private readonly keyPrefix: string;
  private readonly name: string;
  private readonly log: Logger;
  private readonly onLoss: (loss: DataLoss) => void;
  private readonly allowEviction: boolean;

  constructor(
    /** Runs commands on the store's connection, bounded and in our words. */
    private readonly command: <T>(operation: string, run: (client: RedisClient) => Promise<T>) => Promise<T>,
    settings: DataIdentitySettings,
  ) {
    this.keyPrefix = settings.keyPrefix;
    this.name = settings.name;
    this.log = settings.log;
    this.onLoss = settings.onLoss;
    this.allowEviction = settings.allowKeyEviction;
  }

  get id(): string | undefined {
    return this.known;
  }

  /** Server clock minus this process's, in ms, once learnt. */
  get clockOffsetMs(): number | undefined {
    return this.offset;
  }

  /**
   * The id: learnt now when it is not known yet (`write` lets a store that finds none set it; a
   * report never does); when known, re-read in the background once a second, never waited for.
   */
  ensure(write: boolean): string | Promise<string | undefined> {
    if (this.known === undefined) return this.check(write).then(() => this.known);
    if (Date.now() - this.lastCheck > CHECK_EVERY_MS) {
      this.lastCheck = Date.now();
      this.check(write).catch(() => undefined);
    }
    return this.known;
  }

  /** A (re)connection: read the id again, without waiting for it. */
  connected(client: RedisClient): void {
    void this.read(client, false).catch(() => undefined);
  }

  /** A reserve made under `expected` found another id (or none) there. Once per change, however many reserves saw it. */
  async found(expected: string, found: string): Promise<void> {
    if (expected !== this.known) return;
    await this.check(true, found);
  }

  private check(write: boolean, seen?: string): Promise<void> {
    this.learning ??= this
      .command('data id', (client) => this.read(client, write, seen))
      .finally(() => {
        this.learning = undefined;
      });
    return this.learning;
  }

  private async read(client: RedisClient, write: boolean, seen?: string): Promise<void> {
    const sent = Date.now();
    // Three commands, not one transaction: on a Cluster the two keys live in different slots.
    const [id, marker, time, policy] = await Promise.all([client.get(dataIdKey(this.keyPrefix)), client.get(dataLostKey(this.keyPrefix)), client.time(), readEvictionPolicy(client)]);
    const back = Date.now();
    this.judgePolicy(policy);
    this.lastCheck = back;
    this.offset = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000) - (sent + back) / 2;
    const current = id ?? '';
    if (this.known !== undefined && (current !== this.known || (seen !== undefined && seen !== this.known))) {
      await this.lost(client, this.known, current);
      return;
    }
    if (id === null) {
      // A server refused for its policy gets nothing written, not even the id.
      if (!write || this.evictionRefusal !== undefined) return;
      await client.set(dataIdKey(this.keyPrefix), `redis:${randomUUID()}`, 'NX');
      this.known = (await client.get(dataIdKey(this.keyPrefix))) ?? undefined;
    } else {
      this.known = id;
    }
    this.loss = marker === null ? undefined : readMarker(marker);
  }

  /** Said once a policy change: a refusal for reserves, or a warning when the store was told to accept it. */
  private judgePolicy(policy: string): void {
    if (policy === this.policy) return;
    this.policy = policy;
    const refusal = evictionRefusal(policy, this.name);
    this.evictionRefusal = this.allowEviction ? undefined : refusal;
    if (refusal !== undefined) {
      this.log[this.allowEviction ? 'warn' : 'error'](
        { store: this.name, maxmemory_policy: policy },
        this.allowEviction ? `budget store on a Redis that may evict its keys (maxmemory-policy ${policy}; allowKeyEviction: true): a limit may reset unseen` : refusal.message,
      );
    }
  }

  /** The data changed under this store: say so, leave the marker, take the data's new id. */
  private async lost(client: RedisClient, known: string, found: string): Promise<void> {
    const loss: DataLoss = { lost: known, found, at: Date.now() };
    await client.set(dataLostKey(this.keyPrefix), JSON.stringify({ ...loss, by: this.name }), 'NX');
    if (found === '') await client.set(dataIdKey(this.keyPrefix), `redis:${randomUUID()}`, 'NX');
    this.known = (await client.get(dataIdKey(this.keyPrefix))) ?? undefined;
    this.loss = readMarker((await client.get(dataLostKey(this.keyPrefix))) ?? '') ?? loss;
    this.log.error(
      { store: this.name, lost_data_id: known, found_data_id: found || null, marker: dataLostKey(this.keyPrefix) },
      `budget store data lost: the data id ${known} is ${found ? `now ${found}` : 'gone'} (a restart without persistence, FLUSHALL or a failover to an empty replica); ` +
        `spend settled before is not in Redis and every limit would count from zero`,
    );
    this.onLoss(this.loss);
  }

  /** The outage a store with onUnavailable 'deny' reports while the data is lost. */
  lossError(): RedisOutage {
    const l = this.loss!;
    return new RedisOutage(
      `its data was lost (data id ${l.lost} ${l.found ? `replaced by ${l.found}` : 'gone'}: a restart without persistence or FLUSHALL), so every tenant's spend ` +
        `would count from zero. Restore the data, or accept the loss, then delete the key ${dataLostKey(this.keyPrefix)} and calls go on; run Redis with appendonly yes`,
    );
  }
}

function readMarker(text: string): DataLoss | undefined {
  try {
    const m = JSON.parse(text) as Partial<DataLoss>;
    return { lost: String(m.lost ?? ''), found: String(m.found ?? ''), at: Number(m.at ?? 0) };
  } catch {
    return text === '' ? undefined : { lost: '', found: '', at: 0 };
  }
}

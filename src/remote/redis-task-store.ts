import { createHash } from 'node:crypto';
import { RedisConnection, type RedisClient } from '../budget/redis/redis-connection.js';
import type { BudgetScript } from '../budget/redis/redis-budget-scripts.js';
import { ElsewhereTask } from './elsewhere-task.js';
import { RedisTaskChannels } from './redis-task-channels.js';
import { pausedRefusal } from './principal-tasks.js';
import { readRedisTaskOptions, type RedisTaskSettings, type RedisTaskStoreOptions } from './redis-task-options.js';
import { ADD, CLAIM, FETCH, FILE, GET, LIST, RENEW, RESUME } from './redis-task-scripts.js';
import { A2AProblem, RPC_CODE } from './rpc-envelope.js';
import { serverSnapshotKey } from './served-pause.js';
import type { ServedTask } from './served-task.js';
import { changingFields, fieldsOf, restoredTask, summariesOf, taskFields, type StoredFields } from './stored-task.js';
import { pageOf, type TaskPage, type TaskQuery } from './task-page.js';
import { TaskQuotaExceeded, type TaskStore } from './task-store.js';
import { TASK_STATE } from './wire.js';

export type { RedisTaskStoreOptions } from './redis-task-options.js';

/** Where a task is in the store while this replica holds it: in flight under its lease, or read back paused. */
type Held = 'running' | 'paused';

/** Principals' hash tags, each worked out once: every call of a principal names its keys by it. Bounded: past it, worked out again. */
const tags = new Map<string, string>();
const MAX_TAGS = 10_000;

function tagOf(owner: string): string {
  let tag = tags.get(owner);
  if (tag === undefined) {
    if (tags.size >= MAX_TAGS) tags.clear();
    tags.set(owner, (tag = createHash('sha256').update(owner).digest('hex').slice(0, 32)));
  }
  return tag;
}

const flat = (fields: StoredFields): string[] => Object.entries(fields).flat();

/**
 * A served agent's tasks in Redis, shared by every replica serving it: task state and history,
 * paused runs' snapshots, per-principal indexes for ListTasks, and a lease on each running task
 * that its replica renews while the run lives, so a task whose replica died reads `failed`, with
 * the reason, on every replica. Bounds and expiry are per principal and checked inside Redis in
 * the same step as the change they guard (redis-task-scripts.ts), fleet-wide.
 */
export class RedisTaskStore implements TaskStore {
  /** Signs paused tasks' snapshots: the fleet's shared key when given. */
  readonly snapshotKey: string;
  private readonly settings: RedisTaskSettings;
  private readonly connection: RedisConnection;
  private readonly common: string[];
  private readonly inFlight = new Map<string, ServedTask>();
  private readonly held = new WeakMap<ServedTask, Held>();
  /** How many of each held task's messages the store holds: filing sends its history only when a message came since. */
  private readonly storedMessages = new WeakMap<ServedTask, number>();
  private renewing: NodeJS.Timeout | undefined;
  /** Filings under way: close() waits for them, so a server closed before its store files what it aborted. */
  private readonly filing = new Set<Promise<void>>();
  private readonly channels: RedisTaskChannels;

  constructor(options: RedisTaskStoreOptions = {}) {
    const s = (this.settings = readRedisTaskOptions(options));
    this.snapshotKey = s.snapshotKey ?? serverSnapshotKey();
    const given = s.client as unknown as RedisClient | undefined;
    const timesOut = given === undefined || typeof (given.options as { commandTimeout?: unknown }).commandTimeout === 'number';
    const connection = { name: s.name, address: s.address, timeoutMs: s.timeoutMs, log: s.logger, onUnavailable: 'fail the request', onBack: () => undefined, onConnect: () => undefined };
    this.connection = new RedisConnection(connection, s.url, given, timesOut);
    this.channels = new RedisTaskChannels(this.connection, s.keyPrefix, s.logger, (id, owner) => {
      const t = this.inFlight.get(id);
      if (t?.owner === owner) t.cancel();
    });
    const l = s.limits;
    // An idle principal's keys outlive its longest-kept task, then go by themselves.
    const keepMs = l.pausedTtlMs + l.finishedTtlMs + 2 * s.leaseMs;
    this.common = [l.pausedTtlMs, l.finishedTtlMs, l.maxFinishedPerPrincipal, l.maxFinishedBytesPerPrincipal, keepMs, s.leaseMs].map(String);
  }

  /** "<prefix>:{<tag>}:": the tag is a hash of the principal, so any id (braces included) lands all its keys in one slot. */
  private base(owner: string): string {
    return `${this.settings.keyPrefix}:{${tagOf(owner)}}:`;
  }

  private run(script: BudgetScript, owner: string, args: readonly string[]): Promise<unknown> {
    return this.connection.eval(script, [this.base(owner)], [...this.common, ...args]);
  }

  /** Admission and filing in one script: a principal at its paused bound is refused (naming the bound) and nothing is kept. */
  async add(t: ServedTask): Promise<void> {
    const fields = taskFields(t);
    // A kept task starts at once (a stream's as its stream starts): another replica reads it working.
    if (t.state === TASK_STATE.SUBMITTED) fields.state = String(TASK_STATE.WORKING);
    const { maxPausedPerPrincipal, maxPausedBytesPerPrincipal } = this.settings.limits;
    const bounds = [String(maxPausedPerPrincipal), String(maxPausedBytesPerPrincipal)];
    const [[added, paused, bytes]] = (await Promise.all([this.run(ADD, t.owner, [...bounds, t.id, ...flat(fields)]), this.channels.listen()])) as [[number, number, number], void];
    if (added !== 1) throw new TaskQuotaExceeded(pausedRefusal(t.owner, paused, bytes, this.settings.limits) ?? `principal "${t.owner}" is at its paused bound`);
    this.hold(t, 'running');
    this.storedMessages.set(t, t.history.length);
  }

  async resumed(t: ServedTask): Promise<void> {
    const taken = await this.run(RESUME, t.owner, [t.id, ...flat(changingFields(t))]);
    if (taken !== 1) {
      throw new A2AProblem(RPC_CODE.unsupportedOperation, `task ${t.id} no longer waits for input: another message resumed it, or it was cancelled or expired; read it with GetTask`);
    }
    this.hold(t, 'running');
    this.storedMessages.set(t, t.history.length);
    await this.channels.listen();
  }

  async get(id: string, owner: string): Promise<ServedTask | undefined> {
    const local = this.inFlight.get(id);
    if (local !== undefined) return local.owner === owner ? local : undefined;
    const f = fieldsOf((await this.run(GET, owner, [id])) as string[]);
    return this.restore(f, owner);
  }

  /** A durable task whose replica died, taken over here: held under this replica's lease, filed when its tree's answer is in. */
  async claim(id: string, owner: string): Promise<ServedTask | undefined> {
    const f = fieldsOf((await this.run(CLAIM, owner, [id])) as string[]);
    if (f.core === undefined) return undefined;
    const t = restoredTask(f, this.snapshotKey);
    if (t.owner !== owner) return undefined;
    this.hold(t, 'running');
    await this.channels.listen();
    return t;
  }

  async list(owner: string, query: TaskQuery): Promise<TaskPage> {
    const page = pageOf(summariesOf((await this.run(LIST, owner, [])) as string[]), query);
    const records = page.tasks.length === 0 ? [] : ((await this.run(FETCH, owner, page.tasks.map((s) => s.id))) as string[][]);
    const tasks: ServedTask[] = [];
    for (const [i, s] of page.tasks.entries()) {
      const t = this.inFlight.get(s.id) ?? this.restore(fieldsOf(records[i] ?? []), owner);
      if (t !== undefined) tasks.push(t);
    }
    return { tasks, nextPageToken: page.nextPageToken, totalSize: page.totalSize };
  }

  running(): IterableIterator<ServedTask> {
    return this.inFlight.values();
  }

  /**
   * Waits for the filings under way (close the server first: its runs are aborted and filed),
   * stops renewing leases (runs still in flight here lapse) and closes the client the store made.
   */
  async close(): Promise<void> {
    await Promise.allSettled([...this.filing]);
    clearInterval(this.renewing);
    this.renewing = undefined;
    await this.channels.close();
    await this.connection.close();
  }

  /** The stored task, if `owner`'s: one running elsewhere is watched through the store; a paused one is filed again if cancelled here. */
  private restore(f: StoredFields, owner: string): ServedTask | undefined {
    if (f.core === undefined) return undefined;
    const state = Number(f.state);
    const elsewhere = state === TASK_STATE.WORKING || state === TASK_STATE.SUBMITTED;
    const t = restoredTask(f, this.snapshotKey, elsewhere ? ElsewhereTask : undefined);
    if (t.owner !== owner) return undefined;
    if (t instanceof ElsewhereTask) {
      t.reread = () => this.get(t.id, owner);
      t.requestCancel = () => this.channels.request(t.id, owner);
      t.watchEvents = (watcher) => this.channels.watchEvents(t.id, tagOf(owner), watcher);
    }
    if (state === TASK_STATE.INPUT_REQUIRED) {
      this.hold(t, 'paused');
      this.storedMessages.set(t, t.history.length);
    }
    return t;
  }

  /** `t` is this replica's to file when its stretch ends: a run in flight here (under a lease) or a paused task read here. */
  private hold(t: ServedTask, where: Held): void {
    const first = !this.held.has(t);
    this.held.set(t, where);
    if (where === 'running') {
      this.inFlight.set(t.id, t);
      // Each stretch: its tree's run events (when it streams them) go to watchers on other replicas too.
      t.watch((news) => {
        if (news.type === 'events') this.channels.publishEvents(t.id, tagOf(t.owner), news.events);
      });
      this.renewing ??= setInterval(() => void this.renew(), Math.max(50, Math.floor(this.settings.leaseMs / 3))).unref();
    }
    if (first) {
      t.onEnd(() => {
        const filed = this.file(t).finally(() => this.filing.delete(filed));
        this.filing.add(filed);
        return filed;
      });
    }
  }

  /** A stretch of `t` ended: it waits for input (its snapshot kept), or it has ended. */
  private async file(t: ServedTask): Promise<void> {
    const from = this.held.get(t) ?? 'running';
    const to = t.terminal ? 'finished' : 'paused';
    this.inFlight.delete(t.id);
    this.held.set(t, 'paused');
    try {
      const withHistory = this.storedMessages.get(t) !== t.history.length;
      const filed = await this.run(FILE, t.owner, [t.id, to, from, ...flat(changingFields(t, withHistory))]);
      if (filed !== 1) this.settings.logger.warn({ task_id: t.id, store: this.settings.name }, 'RedisTaskStore: a task ended here after the store had already ended it (its lease lapsed, or another replica took it); its outcome was not filed');
    } catch (error) {
      this.settings.logger.error({ task_id: t.id, store: this.settings.name, err: error }, 'RedisTaskStore: could not file a task; it reads failed once its lease lapses');
    }
  }

  /**
   * Renews the lease of every run in flight here, one call a principal. A run whose lease was
   * lost (this replica was cut off longer than leaseMs, and the fleet has read it failed) is
   * stopped: its outcome could no longer be filed, and its spend would go on for nothing.
   */
  private async renew(): Promise<void> {
    if (this.inFlight.size === 0) {
      clearInterval(this.renewing);
      this.renewing = undefined;
      return;
    }
    const byOwner = new Map<string, string[]>();
    for (const t of this.inFlight.values()) {
      const ids = byOwner.get(t.owner);
      if (ids === undefined) byOwner.set(t.owner, [t.id]);
      else ids.push(t.id);
    }
    await Promise.all(
      [...byOwner].map(([owner, ids]) =>
        this.run(RENEW, owner, ids).then(
          (lost) => {
            for (const id of lost as string[]) this.inFlight.get(id)?.abort(`task ${id} lost its lease (leaseMs ${this.settings.leaseMs} ms) while this replica could not reach Redis, and the fleet has ended it`);
          },
          (error: unknown) => this.settings.logger.error({ store: this.settings.name, err: error }, 'RedisTaskStore: could not renew leases'),
        ),
      ),
    );
  }
}

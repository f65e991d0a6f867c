import { A2AProblem, RPC_CODE } from './rpc-envelope.js';
import type { ChannelWatcher } from './redis-task-channels.js';
import { ServedTask, type TaskWatcher } from './served-task.js';

/** How often a stream watching a task that runs on another replica reads it again. */
const REREAD_MS = 200;

/**
 * A task read from a shared store while another replica runs it: GetTask and ListTasks show it
 * as stored; a stream watching it here reads it again until it pauses or ends, then ends as a
 * stream of the running replica would, carrying the run events that replica publishes meanwhile;
 * CancelTask asks that replica to stop it.
 */
export class ElsewhereTask extends ServedTask {
  /** Reads the task again from the store (set by the store that made this one). */
  reread: () => Promise<ServedTask | undefined> = async () => undefined;
  /** Asks the replica running the task to stop it (set by the store that made this one). */
  requestCancel: () => Promise<void> = async () => {
    throw new A2AProblem(RPC_CODE.unsupportedOperation, `task ${this.id} is running on another replica of this agent, which this store cannot reach`);
  };

  /**
   * CancelTask here for a run elsewhere: the request goes to the replica running it, and `ended`
   * settles once the store reads the task ended (cancelled; or failed, should that replica have
   * died and its lease lapsed).
   */
  override cancel(): boolean {
    const requested = this.requestCancel();
    this.ended = requested.then(() => new Promise<void>((resolve) => this.watch(() => resolve())));
    return true;
  }

  /** Hears the run events the running replica publishes, and its filing (set by the store that made this one). */
  watchEvents: (watcher: ChannelWatcher) => Promise<() => void> = async () => () => undefined;

  /**
   * Run events as the running replica publishes them; the end as soon as that replica files the
   * task (its filing is published too), or at the latest at a reread (a filing not heard: the
   * notice lost, or the replica died and the task failed as its lease lapsed).
   */
  override watch(watcher: TaskWatcher): () => void {
    let stopped = false;
    let unwatch: (() => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    // A filing heard while a reread is on its way may postdate what that read: read once more.
    let reading: 'no' | 'yes' | 'again' = 'no';
    const poll = async (): Promise<void> => {
      clearTimeout(timer);
      if (stopped) return;
      if (reading !== 'no') return void (reading = 'again');
      reading = 'yes';
      const now = await this.reread().catch(() => this);
      const heardMore = (reading as string) === 'again';
      reading = 'no';
      if (stopped) return;
      if (now === undefined || now.settled) {
        if (now !== undefined) this.take(now);
        stopped = true;
        unwatch?.();
        return watcher({ type: 'ended' });
      }
      if (heardMore) return poll();
      timer = setTimeout(() => void poll(), REREAD_MS).unref();
    };
    this.watchEvents({ events: (events) => stopped || watcher({ type: 'events', events }), filed: () => void poll() }).then(
      (off) => (stopped ? off() : (unwatch = off)),
      () => undefined,
    );
    timer = setTimeout(() => void poll(), REREAD_MS).unref();
    return () => {
      stopped = true;
      clearTimeout(timer);
      unwatch?.();
    };
  }

  /** The state the running replica filed. */
  private take(t: ServedTask): void {
    this.state = t.state;
    this.updatedMs = t.updatedMs;
    this.answer = t.answer;
    this.failure = t.failure;
    this.report = t.report;
    this.pause = t.pause;
    this.expired = t.expired;
    this.history.splice(0, this.history.length, ...t.history);
  }
}

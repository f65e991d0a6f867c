import { A2AProblem, RPC_CODE } from './rpc-envelope.js';
import type { WireEvent } from './served-events.js';
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

  /** Hears the run events the running replica publishes (set by the store that made this one). */
  watchEvents: (fn: (events: readonly WireEvent[]) => void) => Promise<() => void> = async () => () => undefined;

  override watch(watcher: TaskWatcher): () => void {
    let stopped = false;
    let unwatch: (() => void) | undefined;
    this.watchEvents((events) => stopped || watcher({ type: 'events', events })).then(
      (off) => (stopped ? off() : (unwatch = off)),
      () => undefined,
    );
    const poll = async (): Promise<void> => {
      if (stopped) return;
      const now = await this.reread().catch(() => this);
      if (stopped) return;
      if (now === undefined || now.settled) {
        if (now !== undefined) this.take(now);
        stopped = true;
        unwatch?.();
        return watcher({ type: 'ended' });
      }
      setTimeout(() => void poll(), REREAD_MS).unref();
    };
    setTimeout(() => void poll(), REREAD_MS).unref();
    return () => {
      stopped = true;
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

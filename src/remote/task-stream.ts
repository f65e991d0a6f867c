import type { WireEvent } from './served-events.js';
import type { ServedTask } from './served-task.js';
import { endUpdates, eventsUpdate, taskJson, workingUpdate, type Json, type TaskView } from './task-view.js';

/**
 * How far a stream's writes may run ahead of its caller's reading before its text deltas are
 * dropped: the run never waits for a reader (a caller that stops reading would hold the run and
 * its reservations), and every structural event still goes out.
 */
const MAX_STREAM_BACKLOG = 1024 * 1024;

function thinned(events: readonly WireEvent[], backlog: number): readonly WireEvent[] {
  return backlog <= MAX_STREAM_BACKLOG ? events : events.filter((e) => e.type !== 'text.delta');
}

/** Where a task's stream goes: each update as it happens, then the end. */
export interface StreamOut {
  send(update: Json): void;
  end(): void;
  /** Bytes written and not yet taken by the caller. */
  backlog(): number;
}

/** A stream not yet started: started, it writes to `out`, and returns how to stop watching. */
export interface TaskStream {
  start(out: StreamOut): () => void;
  /** The stream will never start (its caller left before it could): whatever it kept is let go. */
  abandon?(): void;
}

/**
 * `task` as A2A's streaming methods answer it: the task first, the working status as the run
 * starts, then (to a caller that activated the usage-lineage extension) the served tree's run
 * events as working status updates, then the
 * answer's artifact and the final status. Updates are pushed to the writer as they happen, with
 * no iterator between the run and the socket. Start it before the run starts: no event is lost.
 */
export function taskStream(task: ServedTask, view: TaskView): TaskStream {
  return {
    start(out) {
      out.send({ task: taskJson(task, view) });
      const finish = () => {
        for (const update of endUpdates(task, view)) out.send(update);
        out.end();
      };
      if (task.settled) {
        finish();
        return () => undefined;
      }
      return task.watch((news) => {
        if (news.type === 'ended') return finish();
        if (news.type === 'working') return out.send(workingUpdate(task));
        if (!view.extension) return;
        const events = thinned(news.events, out.backlog());
        if (events.length > 0) out.send(eventsUpdate(task, events));
      });
    },
  };
}

/** The same stream as an async iteration, for the A2A SDK's 0.3 transport. */
export async function* iterateStream(stream: TaskStream): AsyncGenerator<Json, void, undefined> {
  const queue: Json[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const stop = stream.start({
    send: (update) => (queue.push(update), wake?.()),
    end: () => ((ended = true), wake?.()),
    backlog: () => 0,
  });
  try {
    for (;;) {
      while (queue.length > 0) yield queue.shift()!;
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    stop();
  }
}

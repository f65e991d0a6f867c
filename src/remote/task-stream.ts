import type { RunEvent } from '../agent/run-events.js';
import type { ServedTask, TaskNews } from './served-task.js';
import { endUpdates, eventsUpdate, taskJson, type Json, type TaskView } from './task-view.js';

/**
 * How far a stream's writes may run ahead of its caller's reading before its text deltas are
 * dropped: the run never waits for a reader (a caller that stops reading would hold the run and
 * its reservations), and every structural event still goes out.
 */
export const MAX_STREAM_BACKLOG = 1024 * 1024;

function thinned(events: readonly RunEvent[], backlog: number): readonly RunEvent[] {
  return backlog <= MAX_STREAM_BACKLOG ? events : events.filter((e) => e.type !== 'text.delta');
}

/**
 * A stream of `task` as A2A's streaming methods answer it: the task first, then (to a caller that
 * activated the usage-lineage extension) the served tree's run events as working status updates,
 * then the answer's artifact and the final status. It watches from the moment it is made, so
 * make it before the run starts: no event is lost in between.
 */
export function watchTask(task: ServedTask, view: TaskView, backlog: () => number): AsyncGenerator<Json, void, undefined> {
  const queue: TaskNews[] = [];
  let wake: (() => void) | undefined;
  const stop = task.terminal
    ? () => undefined
    : task.watch((news) => {
        queue.push(news);
        wake?.();
      });
  async function* stream(): AsyncGenerator<Json, void, undefined> {
    try {
      yield { task: taskJson(task, view) };
      for (;;) {
        if (task.terminal && queue.every((n) => n.type !== 'events')) break;
        while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        const news = queue.shift()!;
        if (news.type === 'ended') break;
        if (!view.extension) continue;
        const events = thinned(news.events, backlog());
        if (events.length > 0) yield eventsUpdate(task, events);
      }
      yield* endUpdates(task, view);
    } finally {
      stop();
    }
  }
  return stream();
}

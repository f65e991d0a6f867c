/**
 * A store's filed tasks read oldest first through any mix of filing and deleting: the order a
 * bound drops them in and a sweep expires them in, with deleted entries never read again.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { FiledTasks, type Filed } from '../../src/remote/filed-tasks.js';
import type { ServedTask } from '../../src/remote/served-task.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const filed = (id: string, atMs: number): Filed => ({ task: { id } as ServedTask, bytes: 1, atMs });
const ids = (tasks: FiledTasks) => [...tasks.oldestFirst()].map((f) => f.task.id);

describe('FiledTasks', () => {
  it('reads the live entries oldest first after thousands are dropped from the head', () => {
    const tasks = new FiledTasks();
    for (let i = 0; i < 5000; i++) {
      tasks.add(filed(`t${i}`, i));
      if (tasks.size > 3) tasks.delete([...tasks.oldestFirst()][0]!.task.id);
    }
    expect(ids(tasks)).toEqual(['t4997', 't4998', 't4999']);
    expect(tasks.get('t4996')).toBeUndefined();
  });

  it('skips entries deleted from the middle, and files a task filed again as the newest', () => {
    const tasks = new FiledTasks();
    for (let i = 0; i < 3000; i++) tasks.add(filed(`t${i}`, i));
    for (let i = 1; i < 3000; i++) if (i % 1000 !== 0) tasks.delete(`t${i}`);
    tasks.add(filed('t0', 5000));
    tasks.add(filed('t3000', 3000));
    expect(ids(tasks)).toEqual(['t1000', 't2000', 't0', 't3000']);
    expect(tasks.get('t0')?.atMs).toBe(5000);
    expect(tasks.size).toBe(4);
  });

  it('lets the entry just read be deleted while reading on', () => {
    const tasks = new FiledTasks();
    for (let i = 0; i < 4; i++) tasks.add(filed(`t${i}`, i));
    const read: string[] = [];
    for (const f of tasks.oldestFirst()) {
      read.push(f.task.id);
      if (f.atMs < 2) tasks.delete(f.task.id);
    }
    expect(read).toEqual(['t0', 't1', 't2', 't3']);
    expect(ids(tasks)).toEqual(['t2', 't3']);
  });

  it('lets go of deleted tasks with nothing filed after them, holding at most twice the live ones and 16', async () => {
    const tasks = new FiledTasks();
    const refs: WeakRef<object>[] = [];
    for (let i = 0; i < 1000; i++) {
      const f = filed(`t${i}`, i);
      refs.push(new WeakRef(f.task));
      tasks.add(f);
    }
    // From the middle, as a resume or a bound would: the head stays live, so only a rebuild lets go.
    for (let i = 1; i < 1000; i++) tasks.delete(`t${i}`);
    // A WeakRef holds its target until the job that made it ends.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    // Before deletes trimmed, all 999 were held until the next filing.
    expect(refs.slice(1).filter((r) => r.deref() !== undefined).length).toBeLessThanOrEqual(2 * 1 + 16);
    expect(ids(tasks)).toEqual(['t0']);
  });

  it('reads on over the order it began with when a delete trims the order mid-read', () => {
    const tasks = new FiledTasks();
    for (let i = 0; i < 100; i++) tasks.add(filed(`t${i}`, i));
    const read: string[] = [];
    for (const f of tasks.oldestFirst()) {
      read.push(f.task.id);
      // Deleting most of them rebuilds the order, shorter than where this read has got to.
      if (f.task.id === 't50') for (let i = 0; i < 90; i++) if (i !== 50) tasks.delete(`t${i}`);
    }
    expect(read).toEqual(Array.from({ length: 51 }, (_, k) => `t${k}`).concat(Array.from({ length: 10 }, (_, k) => `t${90 + k}`)));
    expect(ids(tasks)).toEqual(['t50', ...Array.from({ length: 10 }, (_, k) => `t${90 + k}`)]);
  });
});

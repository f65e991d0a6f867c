import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';

/**
 * Tasks a served agent answered with (a refusal, a failure, a cancellation), kept so a caller
 * can still GetTask them, but only the most recent `capacity`: the SDK's in-memory store keeps
 * every task forever, and a served agent's memory must follow runs in flight, not runs served.
 * Each principal sees only its own tasks.
 */
export class RecentTaskStore implements TaskStore {
  private readonly tasks = new Map<string, { owner: string; task: Task }>();

  constructor(private readonly capacity = 1000) {}

  private static owner(context: ServerCallContext): string {
    return context.user?.userName ?? '';
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const owner = RecentTaskStore.owner(context);
    const key = `${owner}\u0000${task.id}`;
    this.tasks.delete(key);
    this.tasks.set(key, { owner, task: structuredClone(task) });
    if (this.tasks.size > this.capacity) this.tasks.delete(this.tasks.keys().next().value!);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const entry = this.tasks.get(`${RecentTaskStore.owner(context)}\u0000${taskId}`);
    return entry ? structuredClone(entry.task) : undefined;
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const owner = RecentTaskStore.owner(context);
    const pageSize = Math.min(Math.max(params.pageSize ?? 50, 1), 100);
    const tasks = [...this.tasks.values()]
      .filter((e) => e.owner === owner && (!params.contextId || e.task.contextId === params.contextId) && (!params.status || e.task.status?.state === params.status))
      .map((e) => e.task)
      .reverse();
    return { tasks: tasks.slice(0, pageSize).map((t) => ({ ...structuredClone(t), artifacts: [] })), nextPageToken: '', pageSize, totalSize: tasks.length };
  }
}

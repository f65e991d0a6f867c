// Remote children over the Agent2Agent protocol. The A2A SDK loads on first use, not on import.
export { serveAgent, type ServedAgent } from './serve-agent.js';
export type { ServeAgentOptions } from './serve-options.js';
export type { TaskStore, TaskPage, TaskQuery } from './task-store.js';
export type { TaskRecord, LiveTask } from './task-record.js';
export { pageOf as pageTasks } from './task-page.js';
export type { TaskLimitOptions } from './task-limits.js';
export { InMemoryTaskStore } from './in-memory-task-store.js';
export { RedisTaskStore, type RedisTaskStoreOptions } from './redis-task-store.js';
export type { Principal, Authenticate, IncomingRequest } from './principal.js';
export { remoteChild, type RemoteChildOptions } from './remote-child.js';
export { USAGE_LINEAGE_EXTENSION } from './wire.js';

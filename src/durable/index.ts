// Durable trees (issue 21): a delegation tree recorded in PostgreSQL through DBOS Transact, so
// that when a worker dies another finishes it. DBOS, an optional peer dependency, loads when a
// worker starts, not on import.
export { startDurable, type Durable } from './durable-runtime.js';
export type { DurableOptions, DurableQueueOptions, DurableRunOptions, DurableEnqueueOptions } from './durable-options.js';
export type { DurableAgent } from './agent-registry.js';
export { DurableUnavailableError, DurableEngineError, DurableRunError, ResumeRefusedError, TreeChangedError } from './durable-errors.js';

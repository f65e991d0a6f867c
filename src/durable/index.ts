// Durable trees (issue 21): a delegation tree recorded in PostgreSQL through DBOS Transact, so
// that when a worker dies another finishes it. DBOS, an optional peer dependency, loads when a
// worker starts, not on import.
export { startDurable, type Durable } from './durable-runtime.js';
export type { DurableOptions, DurableQueueOptions, DurableRunOptions, DurableEnqueueOptions } from './durable-options.js';
// The type of DurableRunOptions.lineage: public so a caller placing a tree under its run can name what it builds.
export type { RunLineage } from '../run/run-driver.js';
export type { DurableAgent } from './agent-registry.js';
export { DurableUnavailableError, DurableEngineError, DurableRunError, ResumeRefusedError, TreeChangedError } from './durable-errors.js';

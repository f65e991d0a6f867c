export * from './errors.js';
export * from './ids.js';
export * from './scope.js';
export * from './usage.js';
export * from './child-run.js';
export * from './abort.js';

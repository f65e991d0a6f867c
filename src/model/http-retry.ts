// Split into provider-error.ts, transport.ts and provider-base.ts. Kept only so src/index.ts
// compiles until it imports from those paths; delete it then.
export { ModelProviderError } from './provider-error.js';
export type { HttpProviderOptions } from './provider-base.js';

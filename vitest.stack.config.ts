import { defineConfig } from 'vitest/config';

/**
 * `npm run test:stack`: the end-to-end tests against the real Jaeger, collector, Prometheus and
 * Redis that the global setup brings up (scripts/stack.mjs). `npm test` never runs these.
 */
export default defineConfig({
  test: {
    include: ['test/stack-e2e/**/*.test.ts'],
    globalSetup: ['test/stack-e2e/global-setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    // One file at a time: one test stops and restarts the collector every other file sends to,
    // and timing assertions want the two cores to themselves.
    fileParallelism: false,
    pool: 'forks',
    testTimeout: 180_000,
    hookTimeout: 120_000,
    dangerouslyIgnoreUnhandledErrors: false,
  },
});

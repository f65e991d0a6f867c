import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The end-to-end tests need the real Jaeger, collector, Prometheus and Redis: npm run test:stack.
    exclude: ['**/node_modules/**', 'test/stack-e2e/**'],
    // The CLI and package tests run the built files; dist/ is brought up to date once, first.
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    // vitest already fails a run on an unhandled rejection or uncaught exception; this says so
    // out loud, because the reliability suite depends on it.
    dangerouslyIgnoreUnhandledErrors: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});

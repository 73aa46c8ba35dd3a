import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'shared/src/**/*.test.ts', 'services/*/src/**/*.test.ts'],
    // The load run saturates the machine, so it runs on its own afterwards (vitest.load.config.ts);
    // the chaos run only on demand (`npm run chaos`, vitest.chaos.config.ts).
    exclude: ['test/load/**', 'test/chaos/**', '**/node_modules/**'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/response-count.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each test file starts its own system (database, Redis prefix, ports), so files never share state.
    sequence: { concurrent: false },
  },
});

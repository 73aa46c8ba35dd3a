/** The console's time to content with 10,000 users and 100,000 messages (test/console/performance.perf.ts); writes docs/console/PERFORMANCE.md. */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  test: { ...base.test, include: ['test/console/performance.perf.ts'], exclude: ['**/node_modules/**'], maxWorkers: 1, testTimeout: 600_000 },
});

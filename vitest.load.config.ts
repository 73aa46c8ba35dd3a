/** The two-minute load run with accounting (test/load), alone on the machine after the suite. */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  test: { ...base.test, include: ['test/load/**/*.test.ts'], exclude: ['**/node_modules/**'], maxWorkers: 1 },
});

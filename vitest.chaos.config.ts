/** `npm run chaos`: the chaos run of test/chaos, alone; never part of `npm test`. */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  test: { ...base.test, include: ['test/chaos/**/*.test.ts'], exclude: ['**/node_modules/**'], maxWorkers: 1 },
});

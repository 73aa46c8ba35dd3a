// `npm run migrate`: apply every service's pending migrations (what `npm start` does first).
import { spawnSync } from 'node:child_process';
import { MIGRATIONS, root } from './processes.mjs';

for (const step of MIGRATIONS) {
  const result = spawnSync(process.execPath, [step.script], { stdio: 'inherit', cwd: root });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

// `npm run import`: the dump-import CLI with the development settings `npm start` uses, so that it
// reaches the same database and queues as the system started on this machine.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { root, withDevSecrets } from './processes.mjs';

const cli = join(root, 'services', 'identity', 'dist', 'cli', 'import.js');
const { status } = spawnSync(process.execPath, [cli, ...process.argv.slice(2)], {
  env: withDevSecrets({ ...process.env }),
  stdio: 'inherit',
});
process.exit(status ?? 1);

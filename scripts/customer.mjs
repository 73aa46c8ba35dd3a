// `npm run customer`: the customer CLI with the development secrets `npm start` uses (the
// encryption key above all), so a customer created on a developer machine is readable by it.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { root, withDevSecrets } from './processes.mjs';

const cli = join(root, 'services', 'identity', 'dist', 'cli', 'customer.js');
const { status } = spawnSync(process.execPath, [cli, ...process.argv.slice(2)], {
  env: withDevSecrets({ ...process.env }),
  stdio: 'inherit',
});
process.exit(status ?? 1);

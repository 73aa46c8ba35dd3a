// `npm run customer`, `npm run app` and `npm run import`: identity's CLIs (services/identity/dist/cli/<name>.js)
// with the development secrets `npm start` uses (the encryption key above all), so that what they
// write on a developer machine is readable by it and they read what it wrote.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { root, withDevSecrets } from './processes.mjs';

const [name, ...args] = process.argv.slice(2);
const cli = join(root, 'services', 'identity', 'dist', 'cli', `${name}.js`);
const { status } = spawnSync(process.execPath, [cli, ...args], {
  env: withDevSecrets({ ...process.env }),
  stdio: 'inherit',
});
process.exit(status ?? 1);

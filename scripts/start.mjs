// `npm start`: migrate, then supervise every service and worker as a separate process.
// Ctrl-C or SIGTERM stops them all; a process that crashes is restarted with backoff.
import { spawn, spawnSync } from 'node:child_process';
import { MIGRATIONS, processes, root, withDevSecrets } from './processes.mjs';

const env = withDevSecrets({ ...process.env });
const log = (message) => console.log(`[supervisor] ${message}`);

for (const step of MIGRATIONS) {
  const result = spawnSync(process.execPath, [step.script], { env, stdio: 'inherit', cwd: root });
  if (result.status !== 0) {
    log(`${step.name} failed (exit ${result.status}); not starting.`);
    process.exit(result.status ?? 1);
  }
}

let stopping = false;
const children = new Map();

function start(entry, attempt = 0) {
  const child = spawn(process.execPath, [entry.script], { env: { ...env, ...entry.env }, stdio: 'inherit', cwd: root });
  const startedAt = Date.now();
  children.set(entry.name, child);
  child.on('exit', (code, signal) => {
    children.delete(entry.name);
    if (stopping) return;
    // Back off when a process keeps crashing right after start.
    const next = Date.now() - startedAt > 10_000 ? 0 : attempt + 1;
    const delay = Math.min(30_000, 500 * 2 ** next);
    log(`${entry.name} exited (${signal ?? code}); restarting in ${delay} ms`);
    setTimeout(() => !stopping && start(entry, next), delay);
  });
}

for (const entry of processes(env)) start(entry);
log(`started ${[...children.keys()].join(', ')}; gateway on port ${env.PORT || 8080}`);

function stop(signal) {
  if (stopping) return;
  stopping = true;
  log(`${signal}: stopping ${[...children.keys()].join(', ')}`);
  for (const child of children.values()) child.kill('SIGTERM');
  const deadline = setTimeout(() => {
    for (const child of children.values()) child.kill('SIGKILL');
    process.exit(1);
  }, 15_000);
  const check = setInterval(() => {
    if (children.size === 0) {
      clearInterval(check);
      clearTimeout(deadline);
      log('all processes stopped');
      process.exit(0);
    }
  }, 50);
}
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));

// `npm start`: migrate, then supervise every service and worker as a separate process.
// Ctrl-C or SIGTERM stops them all, also while the migrations run; a process that crashes is
// restarted with backoff. Exits 0 when everything stopped cleanly, 1 otherwise.
// npm passes a SIGTERM it gets on to its script's shell, which would die without passing it on
// and leave this process and all it started running: so `npm start` execs this script once the
// build is done (`exec node scripts/start.mjs`), and the signal reaches the supervisor itself.
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { MIGRATIONS, processes, root, withDevSecrets } from './processes.mjs';

const STOP_DEADLINE_MS = 15_000;
const env = withDevSecrets({ ...process.env });
/** How long the system may take to become ready before the supervisor says what it still waits for (READY_NOTICE_SECONDS). */
const NOT_READY_NOTICE_MS = 1000 * (/^[1-9][0-9]*$/.test(env.READY_NOTICE_SECONDS ?? '') ? Number(env.READY_NOTICE_SECONDS) : 60);
const log = (message) => console.log(`[supervisor] ${message}`);

let stopping = false;
/** Set when a process did not stop cleanly (exit code ≠ 0 and not ended by our signal). */
let failed = false;
const children = new Map();
const restartTimers = new Set();

const stoppedCleanly = (code, signal) => code === 0 || signal === 'SIGTERM' || signal === 'SIGINT';

// Installed before anything is spawned: a signal during the migrations must stop them too,
// not kill this process and leave the migration running.
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));

function stop(signal) {
  if (stopping) return;
  stopping = true;
  for (const timer of restartTimers) clearTimeout(timer);
  restartTimers.clear();
  log(`${signal}: stopping ${[...children.keys()].join(', ') || 'nothing'}`);
  for (const child of children.values()) child.kill('SIGTERM');
  const deadline = setTimeout(() => {
    log(`still running after ${STOP_DEADLINE_MS} ms: ${[...children.keys()].join(', ')}; killing`);
    for (const child of children.values()) child.kill('SIGKILL');
    process.exit(1);
  }, STOP_DEADLINE_MS);
  const check = setInterval(() => {
    if (children.size > 0) return;
    clearInterval(check);
    clearTimeout(deadline);
    log(failed ? 'all processes stopped; some did not stop cleanly' : 'all processes stopped');
    process.exit(failed ? 1 : 0);
  }, 50);
}

/** Spawns a process and reports its end once (also when it could not be spawned at all). */
function run(name, script, extraEnv, onEnd) {
  const child = spawn(process.execPath, [script], { env: { ...env, ...extraEnv }, stdio: 'inherit', cwd: root });
  children.set(name, child);
  let ended = false;
  const end = (code, signal) => {
    if (ended) return;
    ended = true;
    children.delete(name);
    if (stopping && !stoppedCleanly(code, signal)) {
      failed = true;
      log(`${name} exited (${signal ?? code}) while stopping`);
    }
    onEnd(code, signal);
  };
  child.on('exit', end);
  child.on('error', (error) => {
    log(`${name} could not run: ${error.message}`);
    end(1, null);
  });
  return child;
}

function migrate(step) {
  return new Promise((resolve) => run(step.name, step.script, {}, (code, signal) => resolve({ code, signal })));
}

function start(entry, attempt = 0) {
  const startedAt = Date.now();
  run(entry.name, entry.script, entry.env, (code, signal) => {
    if (stopping) return;
    // Back off when a process keeps crashing right after start.
    const next = Date.now() - startedAt > 10_000 ? 0 : attempt + 1;
    const delay = Math.min(30_000, 500 * 2 ** next);
    log(`${entry.name} exited (${signal ?? code}); restarting in ${delay} ms`);
    const timer = setTimeout(() => {
      restartTimers.delete(timer);
      if (!stopping) start(entry, next);
    }, delay);
    restartTimers.add(timer);
  });
}

for (const step of MIGRATIONS) {
  if (stopping) break;
  log(`running ${step.name}`);
  const { code, signal } = await migrate(step);
  // When stopping, stop() exits once every process has ended.
  if (stopping) break;
  if (code !== 0) {
    log(`${step.name} failed (exit ${signal ?? code}); not starting.`);
    process.exit(code || 1);
  }
}

if (!stopping) {
  for (const entry of processes(env)) start(entry);
  log(`started ${[...children.keys()].join(', ')}; gateway on port ${env.PORT || 8080}`);
  if (!/^(off|false)$/i.test(env.CONSOLE ?? '')) log(`console: http://localhost:${env.PORT || 8080}/console (sign in with CUSTOMER_ID and CUSTOMER_SECRET)`);
  announceReady();
}

/**
 * Says once when the gateway's /readyz answers 200: the processes log for a while after they
 * started, and a reader watching them needs to know when the first call can be made. Says once,
 * too, what is still failing when that takes long (PostgreSQL or Redis not where the settings
 * point, a port taken), which the flood of retries in the log hides.
 */
async function announceReady() {
  const port = env.PORT || 8080;
  // The gateway listens on HOST (127.0.0.1 unless set); a wildcard address is reached on loopback.
  const host = !env.HOST || env.HOST === '0.0.0.0' || env.HOST === '::' ? '127.0.0.1' : env.HOST;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/readyz`;
  const since = Date.now();
  let noticed = false;
  while (!stopping) {
    let failing = 'the gateway does not answer';
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      const body = await response.json().catch(() => null);
      if (response.status === 200) {
        log(`ready: http://localhost:${port} answers (next: "A first call" in README.md)`);
        return;
      }
      const checks = Object.entries(body?.checks ?? {}).filter(([, state]) => state !== 'ok');
      failing = checks.map(([name, state]) => `${name}: ${state}`).join('; ') || `the gateway answers ${response.status}`;
    } catch {
      // Not listening yet.
    }
    if (!noticed && Date.now() - since > NOT_READY_NOTICE_MS) {
      noticed = true;
      // A gateway that does not answer may be waiting for a store: name the one that refuses.
      const stores = failing === 'the gateway does not answer' ? await unreachableStores() : [];
      log(`not ready after ${NOT_READY_NOTICE_MS / 1000} s (GET /readyz): ${[failing, ...stores].join('; ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** PostgreSQL and Redis where the settings point, when no TCP connection to them opens. */
async function unreachableStores() {
  const { commonVars } = await import('../shared/dist/config.js');
  const found = [];
  for (const [name, variable, defaultPort] of [['PostgreSQL', 'DATABASE_URL', 5432], ['Redis', 'REDIS_URL', 6379]]) {
    // A Redis Cluster URL lists several hosts: the first one stands for them.
    const url = new URL((env[variable] || commonVars[variable].default).replace(/^(\w+)\+cluster:/, '$1:').split(',')[0]);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(url.port) || defaultPort;
    const problem = await new Promise((resolve) => {
      const socket = connect({ host, port, timeout: 2000 });
      socket.once('connect', () => {
        socket.destroy();
        resolve(null);
      });
      socket.once('timeout', () => {
        socket.destroy();
        resolve('no answer within 2 s');
      });
      socket.once('error', (error) => resolve(error.message));
    });
    if (problem) found.push(`${name} at ${host}:${port} (${variable}): ${problem}`);
  }
  return found;
}

// A private Redis Cluster on loopback, for the tests (test/support/redis-cluster.ts) and the bench
// (BENCH_REDIS=cluster): three primaries (no replicas), each a `redis-server` on a free port
// without persistence, in a temporary directory that holds their cluster config files, joined
// with `redis-cli --cluster create`. `stop()` kills them and removes the directory.
// `node scripts/redis-cluster.mjs` starts one, prints its REDIS_URL and runs until Ctrl-C.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `count` distinct ports that were free a moment ago: all bound at once, then released. */
async function freePorts(count) {
  const servers = await Promise.all(
    Array.from({ length: count }, () => new Promise((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve(server));
    })),
  );
  const ports = servers.map((server) => server.address().port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

function cli(port, ...args) {
  const result = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8', timeout: 30_000 });
  if (result.status !== 0) throw new Error(`redis-cli ${args.join(' ')}: ${result.stderr || result.stdout}`);
  return result.stdout;
}

async function until(what, check, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function answersPing(port) {
  try {
    return cli(port, 'ping').trim() === 'PONG';
  } catch {
    return false;
  }
}

/** Starts the cluster: `{ url: 'redis+cluster://127.0.0.1:p1,…', ports, stop() }`. */
export async function startRedisCluster(nodes = 3) {
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
  const children = [];
  const stop = async () => {
    await Promise.all(
      children.map((child) => {
        if (child.exitCode !== null || child.signalCode !== null) return undefined;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        return exited;
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // Each node's cluster bus gets a free port of its own: the default (port + 10000) may be taken or past 65535.
    const free = await freePorts(nodes * 2);
    const ports = free.slice(0, nodes);
    for (const [index, port] of ports.entries()) {
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-port', String(free[nodes + index])];
      args.push('--cluster-config-file', join(dir, `nodes-${port}.conf`), '--dir', dir, '--save', '', '--appendonly', 'no');
      children.push(spawn('redis-server', args, { stdio: 'ignore' }));
    }
    for (const [index, port] of ports.entries()) {
      await until(`redis-server on port ${port} did not answer`, () => {
        if (children[index].exitCode !== null) throw new Error(`redis-server exited with ${children[index].exitCode} on port ${port}`);
        return answersPing(port);
      });
    }
    cli(ports[0], '--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '0', '--cluster-yes');
    // Every node must know the whole slot map before clients read it from any of them.
    await until('the cluster was not ok', () => ports.every((port) => /cluster_state:ok/.test(cli(port, 'cluster', 'info'))));
    return { url: `redis+cluster://${ports.map((port) => `127.0.0.1:${port}`).join(',')}`, ports, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const cluster = await startRedisCluster();
  console.log(`REDIS_URL=${cluster.url}`);
  const end = () => void cluster.stop().then(() => process.exit(0));
  process.on('SIGINT', end);
  process.on('SIGTERM', end);
}

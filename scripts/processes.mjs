// What `npm start` runs: the migration steps, then every HTTP service and worker as its own process.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export const MIGRATIONS = ['identity', 'conversation', 'notification', 'webhooks', 'mail'].map((service) => ({
  name: `${service}-migrate`,
  script: join(root, 'services', service, 'dist', 'main-migrate.js'),
}));

/**
 * Memory of each long-running process, the one place these values are set: `npm start` passes
 * `--max-old-space-size=<heapMb>` in NODE_OPTIONS, and docker-compose.yml and deploy/k8s set the same
 * flag with a container memory limit of `limitMb` (test/operate checks them against this table).
 * Without a heap limit V8 sizes its heap for the whole machine and lets garbage pile up (a service
 * with ~40 MB of live objects grew past 200 MB under load). Measured under load (user reads, message
 * creates, 100-message pages, then four concurrent 9 MB message bodies), with these limits: heap
 * used peaks at 35-60 MB in every process but conversation, which parses and stores the large
 * bodies (262 MB used at the 256 MB limit, 490 MB with no limit), RSS 420 MB. Every API parses
 * bodies of up to 10 MB, hence 256 MB for each but the gateway, which streams bodies through
 * (41 MB used); workers build and send events that carry whole messages: 192 MB. RSS stays
 * 60-160 MB above the heap: container limits are twice the heap.
 */
export const PROCESS_MEMORY = {
  gateway: { heapMb: 128, limitMb: 256 },
  identity: { heapMb: 256, limitMb: 512 },
  conversation: { heapMb: 256, limitMb: 512 },
  notification: { heapMb: 256, limitMb: 512 },
  webhooks: { heapMb: 256, limitMb: 512 },
  mail: { heapMb: 256, limitMb: 512 },
  'identity-worker': { heapMb: 192, limitMb: 384 },
  'conversation-worker': { heapMb: 192, limitMb: 384 },
  'notification-worker': { heapMb: 192, limitMb: 384 },
  'webhooks-worker': { heapMb: 192, limitMb: 384 },
  'mail-worker': { heapMb: 192, limitMb: 384 },
};

/** NODE_OPTIONS with the process's heap limit, unless the operator's NODE_OPTIONS already sets one. */
export function nodeOptionsFor(name, inherited = '') {
  if (/--max-old-space-size[=\s]/.test(inherited)) return inherited;
  return [inherited, `--max-old-space-size=${PROCESS_MEMORY[name].heapMb}`].filter(Boolean).join(' ');
}

/** Long-running processes, each with its own environment on top of the shared one. */
export function processes(env) {
  const port = (name, fallback) => env[name] || String(fallback);
  const identityPort = port('IDENTITY_PORT', 8081);
  const conversationPort = port('CONVERSATION_PORT', 8082);
  const notificationPort = port('NOTIFICATION_PORT', 8083);
  const webhooksPort = port('WEBHOOKS_PORT', 8084);
  const mailPort = port('MAIL_PORT', 8085);
  const url = (p) => `http://127.0.0.1:${p}`;
  // Every process gets every service URL; each reads the ones it calls.
  const urls = {
    IDENTITY_URL: env.IDENTITY_URL || url(identityPort),
    CONVERSATION_URL: env.CONVERSATION_URL || url(conversationPort),
    NOTIFICATION_URL: env.NOTIFICATION_URL || url(notificationPort),
    WEBHOOKS_URL: env.WEBHOOKS_URL || url(webhooksPort),
    MAIL_URL: env.MAIL_URL || url(mailPort),
  };
  // Each process its own /metrics port: METRICS_PORT_BASE (default 9080) + offset; METRICS_PORT=0 disables all.
  const metricsBase = Number(env.METRICS_PORT_BASE || 9080);
  const metrics = (offset) => (env.METRICS_PORT === '0' ? '0' : String(metricsBase + offset));
  return [
    { name: 'identity', script: 'services/identity/dist/main-api.js', env: { PORT: identityPort, METRICS_PORT: metrics(1) } },
    { name: 'identity-worker', script: 'services/identity/dist/main-worker.js', env: { METRICS_PORT: metrics(11) } },
    { name: 'conversation', script: 'services/conversation/dist/main-api.js', env: { PORT: conversationPort, METRICS_PORT: metrics(2) } },
    { name: 'conversation-worker', script: 'services/conversation/dist/main-worker.js', env: { METRICS_PORT: metrics(12) } },
    { name: 'notification', script: 'services/notification/dist/main-api.js', env: { PORT: notificationPort, METRICS_PORT: metrics(3) } },
    { name: 'notification-worker', script: 'services/notification/dist/main-worker.js', env: { METRICS_PORT: metrics(13) } },
    { name: 'webhooks', script: 'services/webhooks/dist/main-api.js', env: { PORT: webhooksPort, METRICS_PORT: metrics(4) } },
    { name: 'webhooks-worker', script: 'services/webhooks/dist/main-worker.js', env: { METRICS_PORT: metrics(14) } },
    { name: 'mail', script: 'services/mail/dist/main-api.js', env: { PORT: mailPort, METRICS_PORT: metrics(5) } },
    { name: 'mail-worker', script: 'services/mail/dist/main-worker.js', env: { METRICS_PORT: metrics(15) } },
    { name: 'gateway', script: 'services/gateway/dist/main-api.js', env: { PORT: port('PORT', 8080), METRICS_PORT: metrics(0) } },
  ].map((entry) => ({
    ...entry,
    env: {
      ...urls,
      // Internal services and workers are reached on loopback only; HOST (default 127.0.0.1 too)
      // is where the gateway listens, e.g. 0.0.0.0 to reach it from other machines.
      HOST: entry.name === 'gateway' ? env.HOST || '127.0.0.1' : '127.0.0.1',
      NODE_OPTIONS: nodeOptionsFor(entry.name, env.NODE_OPTIONS),
      ...entry.env,
    },
    script: join(root, entry.script),
  }));
}

/** The secrets withDevSecrets provides; with all of them set, .data is never read or written. */
export const DEV_SECRET_NAMES = ['INTERNAL_TOKEN', 'ACCESS_TOKEN_SECRET', 'FILE_URL_SECRET', 'SECRETS_ENCRYPTION_KEY'];

/**
 * Secrets the services share. In production they come from the environment; on a developer
 * machine they are generated once and kept in .data/dev-secrets.json (git-ignored).
 */
export function withDevSecrets(env) {
  const names = DEV_SECRET_NAMES;
  if (names.every((name) => env[name])) return env;
  const file = join(root, '.data', 'dev-secrets.json');
  let stored = {};
  if (existsSync(file)) stored = JSON.parse(readFileSync(file, 'utf8'));
  let changed = false;
  for (const name of names) {
    if (!stored[name]) {
      // 32 random bytes in hex: also the form of SECRETS_ENCRYPTION_KEY. Losing that one leaves
      // the stored secrets unreadable, so an existing file only ever gains names.
      stored[name] = randomBytes(32).toString('hex');
      changed = true;
    }
  }
  if (changed) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
  }
  const result = { ...env };
  for (const name of names) result[name] = env[name] || stored[name];
  return result;
}

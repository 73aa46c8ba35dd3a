/**
 * What the image's processes read and serve, taken from the code itself: every entry point with
 * the config spec and loader it boots with, and the variables read straight from process.env.
 * Deployment checks (compose, Kubernetes) compare their files against this.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, processVars, type VarSpec } from '@collab/shared';
import { migrateConfigSpec } from '@collab/shared/storage';
import {
  conversationConfigSpec,
  conversationWorkerConfigSpec,
  loadConversationConfig,
  loadConversationWorkerConfig,
} from '../../services/conversation/src/config.js';
import { gatewayConfigSpec, loadGatewayConfig } from '../../services/gateway/src/config.js';
import {
  identityConfigSpec,
  identityWorkerConfigSpec,
  loadIdentityConfig,
  loadIdentityWorkerConfig,
} from '../../services/identity/src/config.js';
import {
  loadNotificationConfig,
  loadNotificationWorkerConfig,
  notificationConfigSpec,
  notificationWorkerConfigSpec,
} from '../../services/notification/src/config.js';
import { loadMailConfig, loadMailWorkerConfig, mailConfigSpec, mailWorkerConfigSpec } from '../../services/mail/src/config.js';
import { loadWebhooksConfig, webhooksConfigSpec } from '../../services/webhooks/src/config.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const { MIGRATIONS, PROCESS_MEMORY, processes } = (await import(join(ROOT, 'scripts', 'processes.mjs'))) as {
  MIGRATIONS: { name: string; script: string }[];
  /** Heap limit (NODE_OPTIONS) and container memory limit of each long-running process, in MB. */
  PROCESS_MEMORY: Record<string, { heapMb: number; limitMb: number }>;
  processes(env: Record<string, string | undefined>): { name: string; script: string; env: Record<string, string> }[];
};

/** Variables Node itself reads: NODE_OPTIONS carries each process's heap limit. */
export const NODE_VARS = new Set(['NODE_OPTIONS']);

/** The operator's guide, which holds the configuration table. */
export const OPERATING_GUIDE = 'docs/operating.md';

/** The variables the operator's guide's configuration table documents (every name in its first column). */
export function documentedVars(): Set<string> {
  const guide = readFileSync(join(ROOT, OPERATING_GUIDE), 'utf8');
  const start = guide.indexOf('\n## Configuration\n');
  if (start < 0) throw new Error(`${OPERATING_GUIDE} has no "## Configuration" section`);
  const end = guide.indexOf('\n## ', start + 1);
  const names = new Set<string>();
  for (const line of guide.slice(start, end < 0 ? undefined : end).split('\n'))
    if (line.startsWith('| `')) for (const match of line.split('|')[1].matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(match[1]);
  return names;
}

export type Spec = Record<string, VarSpec<unknown>>;


export interface EntryPoint {
  spec: Spec;
  load: (env: NodeJS.ProcessEnv) => unknown;
  kind: 'api' | 'worker' | 'migrate';
  /** Which app an HTTP process serves (its probes and ports). */
  serves?: 'service' | 'gateway';
}

/** Every entry point the image runs: the variables it reads and the loader that validates them at boot. */
export const ENTRY_POINTS: Record<string, EntryPoint> = {
  'services/gateway/dist/main-api.js': { spec: gatewayConfigSpec, load: loadGatewayConfig, kind: 'api', serves: 'gateway' },
  'services/identity/dist/main-api.js': { spec: identityConfigSpec, load: loadIdentityConfig, kind: 'api', serves: 'service' },
  'services/identity/dist/main-worker.js': { spec: identityWorkerConfigSpec, load: loadIdentityWorkerConfig, kind: 'worker' },
  'services/conversation/dist/main-api.js': { spec: conversationConfigSpec, load: loadConversationConfig, kind: 'api', serves: 'service' },
  'services/conversation/dist/main-worker.js': { spec: conversationWorkerConfigSpec, load: loadConversationWorkerConfig, kind: 'worker' },
  'services/notification/dist/main-api.js': { spec: notificationConfigSpec, load: loadNotificationConfig, kind: 'api', serves: 'service' },
  'services/notification/dist/main-worker.js': { spec: notificationWorkerConfigSpec, load: loadNotificationWorkerConfig, kind: 'worker' },
  'services/webhooks/dist/main-api.js': { spec: webhooksConfigSpec, load: loadWebhooksConfig, kind: 'api', serves: 'service' },
  'services/webhooks/dist/main-worker.js': { spec: webhooksConfigSpec, load: loadWebhooksConfig, kind: 'worker' },
  'services/mail/dist/main-api.js': { spec: mailConfigSpec, load: loadMailConfig, kind: 'api', serves: 'service' },
  'services/mail/dist/main-worker.js': { spec: mailWorkerConfigSpec, load: loadMailWorkerConfig, kind: 'worker' },
  ...Object.fromEntries(
    (['identity', 'conversation', 'notification', 'webhooks', 'mail'] as const).map((service) => [
      `services/${service}/dist/main-migrate.js`,
      { spec: migrateConfigSpec(service), load: (env: NodeJS.ProcessEnv) => loadConfig(migrateConfigSpec(service), env), kind: 'migrate' as const },
    ]),
  ),
};

/** Entry points in the sources (services/<name>/src/main-<kind>.ts), as the build names them. */
export function sourceEntryPoints(): string[] {
  const found: string[] = [];
  for (const service of readdirSync(join(ROOT, 'services'))) {
    const src = join(ROOT, 'services', service, 'src');
    if (!existsSync(src)) continue;
    for (const file of readdirSync(src))
      if (/^main-[a-z]+\.ts$/.test(file)) found.push(`services/${service}/dist/${file.replace(/\.ts$/, '.js')}`);
  }
  return found.sort();
}

/**
 * Variables every process reads apart from its service's config spec: the process settings
 * (processVars: listen address, log level, shutdown deadline), and any read straight from process.env.
 * Not the devkit's (shared/src/devkit): tests and tools load it, no process does (a lint rule).
 */
function directlyReadVars(): Set<string> {
  const names = new Set<string>(Object.keys(processVars));
  const devkit = join(ROOT, 'shared', 'src', 'devkit');
  const walk = (dir: string): void => {
    if (!existsSync(dir) || dir === devkit) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
        for (const match of readFileSync(path, 'utf8').matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g)) names.add(match[1]);
    }
  };
  walk(join(ROOT, 'shared', 'src'));
  for (const service of readdirSync(join(ROOT, 'services'))) walk(join(ROOT, 'services', service, 'src'));
  return names;
}
export const DIRECT_VARS = directlyReadVars();

#!/usr/bin/env node
// `npm run k8s-overlay -- <small|production> --image <name:tag> [--database-url <url> --redis-url <url> | --existing-secret]`
// Writes the operator's own overlay, deploy/k8s/local/<overlay>/ (git-ignored), so that deploying
// edits no tracked file: kustomization.yaml (the tracked overlay, the image, the Secret, the
// Ingress host), config.env (settings merged into the ConfigMap) and, unless the Secret exists
// already, secrets.env with fresh random keys. Existing config.env and secrets.env are kept as
// they are: secrets.env's SECRETS_ENCRYPTION_KEY encrypts the stored secrets and must never change.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { root } from './processes.mjs';

const USAGE = `usage: npm run k8s-overlay -- <overlay> --image <registry/collab-backend:tag>
         (--database-url <postgres://…> --redis-url <redis://…> | --existing-secret)
         [--host <public host>] [--without-service-monitor] [--monitoring-namespace <namespace>] [--name <directory>]
  <overlay>          one of deploy/k8s/overlays/: ${readdirSync(join(root, 'deploy', 'k8s', 'overlays')).join(', ')}
  --image            the image the Dockerfile built, as pushed to your registry (a tag or @sha256: digest)
  --database-url     PostgreSQL, written into secrets.env when it is created
  --redis-url        Redis, written into secrets.env when it is created
  --existing-secret  use the Secret collab-secrets you created in the namespace collab; no secrets.env
  --host             the public host name: the Ingress's host and TLS host (overlays with an Ingress),
                     and PUBLIC_URL=https://<host> in config.env when it is created
  --without-service-monitor  leave out the ServiceMonitor (a cluster without the Prometheus Operator)
  --monitoring-namespace     the namespace your Prometheus runs in, which may reach the metrics ports
                             (default: monitoring)
  --name             the directory under deploy/k8s/local/ (default: the overlay's name)`;

/** The generated secrets: 32 random bytes in hex each (also the form SECRETS_ENCRYPTION_KEY takes). */
const GENERATED = ['INTERNAL_TOKEN', 'ACCESS_TOKEN_SECRET', 'FILE_URL_SECRET', 'SECRETS_ENCRYPTION_KEY'];

function fail(message) {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      image: { type: 'string' },
      'database-url': { type: 'string' },
      'redis-url': { type: 'string' },
      'existing-secret': { type: 'boolean', default: false },
      host: { type: 'string' },
      'without-service-monitor': { type: 'boolean', default: false },
      'monitoring-namespace': { type: 'string' },
      name: { type: 'string' },
    },
  });
} catch (error) {
  fail(error.message);
}
const { values, positionals } = parsed;
const [overlay, ...extra] = positionals;
if (!overlay || extra.length > 0) fail('name one overlay');
if (!existsSync(join(root, 'deploy', 'k8s', 'overlays', overlay, 'kustomization.yaml'))) fail(`no overlay "${overlay}" in deploy/k8s/overlays/`);
const name = values.name ?? overlay;
if (!/^[a-z0-9][a-z0-9._-]*$/.test(name)) fail('--name must be a plain directory name (a-z, 0-9, ".", "_", "-")');

// name[:tag] or name@sha256:…; kustomize's images transformer takes them apart the same way.
const image = values.image ?? fail('--image is required: the image the Dockerfile built, e.g. registry.example.com/collab-backend:1.0.0');
const imageMatch = /^([^\s@:]+(?::\d+)?(?:\/[^\s@:]+)*)(?::([\w][\w.-]{0,127})|@(sha256:[a-f0-9]{64}))$/.exec(image);
if (!imageMatch) fail(`--image "${image}" is not <registry/name>:<tag> or <registry/name>@sha256:<digest>`);
const [, newName, newTag, digest] = imageMatch;

const overlayText = readFileSync(join(root, 'deploy', 'k8s', 'overlays', overlay, 'kustomization.yaml'), 'utf8');
const hasIngress = /^\s+- ingress\.yaml$/m.test(overlayText);
const hasServiceMonitor = /^\s+- service-monitor\.yaml$/m.test(overlayText);
const host = values.host;
if (host !== undefined && !/^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/.test(host))
  fail(`--host "${host}" is not a DNS name such as collab.example.com`);
const monitoring = values['monitoring-namespace'];
if (monitoring !== undefined && !/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(monitoring)) fail(`--monitoring-namespace "${monitoring}" is not a namespace name`);
if (values['without-service-monitor'] && !hasServiceMonitor) fail(`the overlay "${overlay}" has no ServiceMonitor to leave out`);

const dir = join(root, 'deploy', 'k8s', 'local', name);
const envFile = join(dir, 'secrets.env');
const generate = !values['existing-secret'];
if (generate && !existsSync(envFile)) {
  const databaseUrl = values['database-url'] ?? fail('--database-url is required to write secrets.env (or --existing-secret)');
  const redisUrl = values['redis-url'] ?? fail('--redis-url is required to write secrets.env (or --existing-secret)');
  if (!/^postgres(ql)?:\/\/\S+$/.test(databaseUrl)) fail('--database-url must be a postgres:// URL');
  if (!/^rediss?(\+cluster)?:\/\/\S+$/.test(redisUrl)) fail('--redis-url must be a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL');
}

mkdirSync(dir, { recursive: true });
const imageLines = [`  - name: collab-backend`, `    newName: ${newName}`, ...(digest ? [`    digest: ${digest}`] : [`    newTag: "${newTag}"`])];
const secretLines = generate
  ? [
      '# The Secret every process reads, from secrets.env.',
      'secretGenerator:',
      '  - name: collab-secrets',
      '    namespace: collab',
      '    envs:',
      '      - secrets.env',
    ]
  : ['# The Secret collab-secrets is the one created in the namespace (--existing-secret): nothing here replaces it.'];
const patchLines = [];
if (host !== undefined && hasIngress)
  patchLines.push(
    '  # The public host, in the Ingress rule and its TLS entry.',
    '  - target:',
    '      kind: Ingress',
    '      name: gateway',
    '    patch: |-',
    '      - op: replace',
    '        path: /spec/rules/0/host',
    `        value: ${host}`,
    '      - op: replace',
    '        path: /spec/tls/0/hosts/0',
    `        value: ${host}`,
  );
if (monitoring !== undefined)
  patchLines.push(
    '  # The namespace whose Prometheus may reach the metrics ports.',
    '  - target:',
    '      kind: NetworkPolicy',
    '      name: allow-metrics-scrape',
    '    patch: |-',
    '      - op: replace',
    '        path: /spec/ingress/0/from/0/namespaceSelector/matchLabels/kubernetes.io~1metadata.name',
    `        value: ${monitoring}`,
  );
if (values['without-service-monitor'])
  patchLines.push(
    '  # No Prometheus Operator in this cluster: no ServiceMonitor.',
    '  - patch: |-',
    '      apiVersion: monitoring.coreos.com/v1',
    '      kind: ServiceMonitor',
    '      metadata:',
    '        name: collab',
    '        namespace: collab',
    '      $patch: delete',
  );
writeFileSync(
  join(dir, 'kustomization.yaml'),
  [
    `# Written by \`npm run k8s-overlay -- ${overlay}\` (git-ignored): \`kubectl apply -k deploy/k8s/local/${name}\`.`,
    '# Run the command again to change the image; it keeps secrets.env.',
    'apiVersion: kustomize.config.k8s.io/v1beta1',
    'kind: Kustomization',
    'namespace: collab',
    'resources:',
    `  - ../../overlays/${overlay}`,
    'images:',
    ...imageLines,
    '# Settings (any variable of the configuration table in docs/operating.md), merged into the ConfigMap.',
    'configMapGenerator:',
    '  - name: collab-config',
    '    namespace: collab',
    '    behavior: merge',
    '    envs:',
    '      - config.env',
    ...secretLines,
    '# The generated objects keep the names the manifests use (no hash suffix): after changing',
    '# config.env or secrets.env, apply again and restart the pods (`kubectl -n collab rollout restart deployment`).',
    'generatorOptions:',
    '  disableNameSuffixHash: true',
    '  labels:',
    '    app.kubernetes.io/part-of: collab',
    ...(patchLines.length > 0 ? ['patches:', ...patchLines] : []),
    '',
  ].join('\n'),
);

const configFile = join(dir, 'config.env');
if (!existsSync(configFile))
  writeFileSync(
    configFile,
    [
      '# Settings merged into the ConfigMap collab-config: NAME=value lines, any variable of the',
      '# configuration table (docs/operating.md). Apply again and restart the pods after a change.',
      ...(host !== undefined ? [`PUBLIC_URL=https://${host}`] : ['# PUBLIC_URL=https://collab.example.com']),
      '# LOG_LEVEL=info',
      '',
    ].join('\n'),
  );

let secretsNote = 'the Secret collab-secrets must exist in the namespace collab';
if (generate && existsSync(envFile)) secretsNote = `kept ${relative(root, envFile)} (its keys must not change)`;
else if (generate) {
  const lines = [
    '# The Secret collab-secrets (kustomize secretGenerator). Keep this file: SECRETS_ENCRYPTION_KEY',
    '# encrypts the stored secrets, and tokens and file links are signed with the others.',
    ...GENERATED.map((key) => `${key}=${randomBytes(32).toString('hex')}`),
    `DATABASE_URL=${values['database-url']}`,
    `REDIS_URL=${values['redis-url']}`,
    '# Optional: the SMTP server mails of replies and mentions go through (unset: no mail leaves).',
    '# SMTP_URL=smtps://user:password@smtp.example.com:465',
    '# Optional: a database of its own for a service (CONVERSATION_, NOTIFICATION_, WEBHOOKS_, MAIL_DATABASE_URL).',
    '# MAIL_DATABASE_URL=',
    '# Optional, both or neither: a customer ensured at boot (CUSTOMER_ID is a UUID).',
    '# CUSTOMER_ID=',
    '# CUSTOMER_SECRET=',
    '',
  ];
  writeFileSync(envFile, lines.join('\n'), { mode: 0o600 });
  chmodSync(envFile, 0o600);
  secretsNote = `wrote ${relative(root, envFile)} with new random keys`;
}
console.log(`wrote ${relative(root, join(dir, 'kustomization.yaml'))}; ${secretsNote}`);
console.log(`next: kubectl apply -k ${relative(root, dir)}`);

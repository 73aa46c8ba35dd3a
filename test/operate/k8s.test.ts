/**
 * deploy/k8s, checked without a cluster: each overlay (small, production) is rendered as the
 * operator deploys it, through the overlay `npm run k8s-overlay` writes with the operator's inputs
 * (image, database, Redis, host), as `kubectl kustomize` renders it (test/support/kustomize.ts; compared with kubectl's own output when
 * kubectl is installed), and what it would apply is checked:
 * - every object validates against the Kubernetes OpenAPI schema of its kind (kubernetes-models'
 *   generated validators; the ServiceMonitor against the Prometheus Operator's CRD schema), and
 *   fields the schema does not know are rejected, as `kubectl apply --validate=strict` does;
 * - the manifests agree with the code: each command is an entry point the build produces, each
 *   container gets every variable its process requires (and only names some process reads), with
 *   values its config loader accepts; ports and probe paths are the ones the apps serve; service
 *   URLs point at the Services; graceful-stop timings fit SHUTDOWN_TIMEOUT_MS; heap and memory
 *   limits are PROCESS_MEMORY's; every metrics port is declared, annotated and scraped;
 * - Service, HPA and PDB selectors and targets match the Deployments; the NetworkPolicies admit
 *   only the gateway's public port from outside; the example Ingress keeps /admin/ off.
 * Needs `npm run build` first (the commands' scripts are looked up in dist/).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { delimiter, join, relative } from 'node:path';
import { createLogger, createServiceApp, type VarSpec } from '@collab/shared';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { createGatewayApp } from '../../services/gateway/src/app.js';
import { renderKustomization, readKustomization, type RenderedObject } from '../support/kustomize.js';
import { DIRECT_VARS, ENTRY_POINTS, MIGRATIONS, NODE_VARS, PROCESS_MEMORY, ROOT, sourceEntryPoints, type Spec } from '../support/process-catalog.js';

const K8S_DIR = join(ROOT, 'deploy', 'k8s');

type Doc = Record<string, any>;
type Manifest = RenderedObject;

// ---------------------------------------------------------------------------------------------
// What the code reads and serves


function readsVar(script: string, name: string): boolean {
  return name in ENTRY_POINTS[script].spec || DIRECT_VARS.has(name) || NODE_VARS.has(name);
}

/** A `vars.secret`: its parser refuses values shorter than 16 characters. */
function isSecretVar(rule: VarSpec<unknown>): boolean {
  try {
    rule.parse('x'.repeat(15));
    return false;
  } catch (error) {
    return /at least 16 characters/.test((error as Error).message);
  }
}

/** An `encryptionKeyVar`: its parser takes exactly 32 bytes, and refuses the Secret's placeholders. */
function isEncryptionKeyVar(rule: VarSpec<unknown>): boolean {
  try {
    rule.parse('ab'.repeat(32));
    rule.parse('CHANGE-ME');
    return false;
  } catch (error) {
    return /32-byte key/.test((error as Error).message);
  }
}

/** Variables that carry credentials: kept in the Secret, never in the ConfigMap or a manifest literal. */
function isCredentialVar(name: string, rule: VarSpec<unknown>): boolean {
  return isSecretVar(rule) || isEncryptionKeyVar(rule) || name === 'DATABASE_URL' || name === 'REDIS_URL' || name === 'CUSTOMER_SECRET';
}

// ---------------------------------------------------------------------------------------------
// Loading and schema validation

const OVERLAYS = ['small', 'production'] as const;
type Overlay = (typeof OVERLAYS)[number];

/** What the operator gives `npm run k8s-overlay`. */
const OPERATOR = {
  image: 'registry.example.com/collab-backend:1.2.3',
  databaseUrl: 'postgres://collab:db-password@postgres.example.com:5432/collab',
  redisUrl: 'rediss://default:redis-password@redis.example.com:6380',
  host: 'collab.example.org',
};

/** The overlays this file wrote under deploy/k8s/local/ (git-ignored), removed when it is done. */
const LOCAL_RUN = `test-${process.pid}-${randomBytes(3).toString('hex')}`;
const written: string[] = [];
afterAll(() => {
  for (const dir of written) rmSync(dir, { recursive: true, force: true });
});

/** Runs `npm run k8s-overlay -- <args>` (the script itself) and answers its directory, status and output. */
function k8sOverlay(name: string, args: string[]): { dir: string; status: number | null; output: string } {
  const dir = join(K8S_DIR, 'local', `${LOCAL_RUN}-${name}`);
  written.push(dir);
  const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'k8s-overlay.mjs'), ...args, '--name', `${LOCAL_RUN}-${name}`], { cwd: ROOT, encoding: 'utf8' });
  return { dir, status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** The operator's overlay of a tracked overlay, as the operator's guide says to write it. */
function operatorOverlay(overlay: Overlay): string {
  const { dir, status, output } = k8sOverlay(overlay, [
    overlay,
    '--image', OPERATOR.image,
    '--database-url', OPERATOR.databaseUrl,
    '--redis-url', OPERATOR.redisUrl,
    '--host', OPERATOR.host,
  ]);
  if (status !== 0) throw new Error(`npm run k8s-overlay -- ${overlay} failed: ${output}`);
  return dir;
}

const OPERATOR_OVERLAYS = Object.fromEntries(OVERLAYS.map((overlay) => [overlay, operatorOverlay(overlay)])) as Record<Overlay, string>;

/** What `kubectl apply -k deploy/k8s/local/<overlay>` would apply. */
function loadManifests(overlay: Overlay): Manifest[] {
  return renderKustomization(OPERATOR_OVERLAYS[overlay], K8S_DIR);
}

/** The kinds deploy/k8s uses, each with the model whose validator holds its OpenAPI schema. */
const MODELS: Record<string, { prototype: { validate(): void } }> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'networking.k8s.io/v1/Ingress': Ingress,
  // A CRD of the Prometheus Operator, validated against its published schema.
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
};

/**
 * The generated validators read every property the schema defines (and every entry of a map);
 * a property of the manifest that was never read is unknown to the schema, i.e. a typo.
 */
function unknownFields(validate: (data: unknown) => void, doc: Doc): string[] {
  const read = new WeakMap<object, Set<string>>();
  const wrap = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    if (!read.has(value)) read.set(value, new Set());
    return new Proxy(value, {
      get(target, key, receiver) {
        if (typeof key === 'string') read.get(target)!.add(key);
        return wrap(Reflect.get(target, key, receiver));
      },
    });
  };
  validate(wrap(doc));
  const unknown: string[] = [];
  const walk = (value: unknown, path: string): void => {
    if (value === null || typeof value !== 'object') return;
    for (const [key, child] of Object.entries(value)) {
      if (!read.get(value)?.has(key)) unknown.push(`${path}/${key}`);
      else walk(child, `${path}/${key}`);
    }
  };
  walk(doc, '');
  return unknown;
}

function schemaProblems(doc: Doc): string[] {
  const model = MODELS[`${doc.apiVersion}/${doc.kind}`];
  if (!model) return [`no schema for apiVersion ${doc.apiVersion} kind ${doc.kind}`];
  const validate = (data: unknown): void => model.prototype.validate.call(data);
  try {
    validate(doc);
  } catch (error) {
    return [(error as Error).message];
  }
  return unknownFields(validate, doc).map((path) => `unknown field ${path}`);
}

// ---------------------------------------------------------------------------------------------
// Workloads and their environment

function name(m: Manifest): string {
  return `${m.doc.kind}/${m.doc.metadata?.name} (${m.file})`;
}

function ofKind(manifests: Manifest[], kind: string): Manifest[] {
  return manifests.filter((m) => m.doc.kind === kind);
}

function byName(manifests: Manifest[], kind: string, objectName: string): Doc | undefined {
  return manifests.find((m) => m.doc.kind === kind && m.doc.metadata?.name === objectName)?.doc;
}

interface ContainerRef {
  owner: Manifest;
  container: Doc;
  podSpec: Doc;
  script: string | undefined;
}

function containersOf(manifests: Manifest[]): ContainerRef[] {
  const refs: ContainerRef[] = [];
  for (const owner of manifests.filter((m) => m.doc.kind === 'Deployment' || m.doc.kind === 'Job')) {
    const podSpec = owner.doc.spec.template.spec;
    for (const container of [...(podSpec.initContainers ?? []), ...podSpec.containers]) {
      const command: string[] = [...(container.command ?? []), ...(container.args ?? [])];
      const script = command.length === 2 && command[0] === 'node' ? command[1] : undefined;
      refs.push({ owner, container, podSpec, script });
    }
  }
  return refs;
}

function secretData(secret: Doc): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(secret.data ?? {})) data[key] = Buffer.from(String(value), 'base64').toString('utf8');
  return { ...data, ...(secret.stringData ?? {}) };
}

interface ResolvedEnv {
  env: Record<string, string>;
  /** Where each variable came from: 'configMap', 'secret' or 'literal'. */
  source: Record<string, string>;
  problems: string[];
}

/** The environment the container sees: envFrom in order, then env (which wins). */
function resolveEnv(manifests: Manifest[], container: Doc): ResolvedEnv {
  const env: Record<string, string> = {};
  const source: Record<string, string> = {};
  const problems: string[] = [];
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    const kind = from.configMapRef ? 'ConfigMap' : 'Secret';
    const object = byName(manifests, kind, ref.name);
    if (!object) {
      if (!ref.optional) problems.push(`envFrom ${kind} ${ref.name} is not in deploy/k8s`);
      continue;
    }
    const values = kind === 'Secret' ? secretData(object) : (object.data ?? {});
    for (const [key, value] of Object.entries(values)) {
      env[`${from.prefix ?? ''}${key}`] = String(value);
      source[`${from.prefix ?? ''}${key}`] = kind === 'Secret' ? 'secret' : 'configMap';
    }
  }
  for (const entry of container.env ?? []) {
    if (entry.value !== undefined || !entry.valueFrom) {
      env[entry.name] = String(entry.value ?? '');
      source[entry.name] = 'literal';
      continue;
    }
    const ref = entry.valueFrom.secretKeyRef ?? entry.valueFrom.configMapKeyRef;
    if (!ref) {
      problems.push(`${entry.name}: only value, secretKeyRef and configMapKeyRef are checked`);
      continue;
    }
    const kind = entry.valueFrom.secretKeyRef ? 'Secret' : 'ConfigMap';
    const object = byName(manifests, kind, ref.name);
    const values = object ? (kind === 'Secret' ? secretData(object) : (object.data ?? {})) : {};
    if (!(ref.key in values)) {
      if (!ref.optional) problems.push(`${entry.name}: ${kind} ${ref.name} has no key ${ref.key}`);
      delete env[entry.name];
      continue;
    }
    env[entry.name] = String(values[ref.key]);
    source[entry.name] = kind === 'Secret' ? 'secret' : 'configMap';
  }
  return { env, source, problems };
}

/** What is wrong with the environment and command of every container. */
function containerProblems(manifests: Manifest[]): string[] {
  const problems: string[] = [];
  for (const { owner, container, script } of containersOf(manifests)) {
    const where = `${name(owner)} container ${container.name}`;
    if (!script || !ENTRY_POINTS[script]) {
      problems.push(`${where}: command ${JSON.stringify(container.command)} is not \`node <entry point>\``);
      continue;
    }
    if (!existsSync(join(ROOT, script))) problems.push(`${where}: ${script} does not exist (run npm run build)`);
    const { spec, load } = ENTRY_POINTS[script];
    const { env, source, problems: refProblems } = resolveEnv(manifests, container);
    problems.push(...refProblems.map((p) => `${where}: ${p}`));
    for (const entry of container.env ?? [])
      if (!readsVar(script, entry.name)) problems.push(`${where}: sets ${entry.name}, which ${script} never reads`);
    for (const [varName, rule] of Object.entries(spec)) {
      const provided = env[varName] !== undefined && env[varName] !== '';
      if (rule.default === undefined && !provided) problems.push(`${where}: required ${varName} is not provided`);
      if (typeof rule.default === 'string' && /127\.0\.0\.1|localhost/.test(rule.default) && !provided)
        problems.push(`${where}: ${varName} is not set and its default ${rule.default} is another pod's address`);
      if (isCredentialVar(varName, rule) && varName in source && source[varName] !== 'secret')
        problems.push(`${where}: ${varName} comes from a ${source[varName]}, not the Secret`);
    }
    if (!env.SHUTDOWN_TIMEOUT_MS) problems.push(`${where}: SHUTDOWN_TIMEOUT_MS is not set`);
    try {
      load(env);
    } catch (error) {
      problems.push(`${where}: its config does not load: ${(error as Error).message}`);
    }
  }
  return problems;
}

function preStopSeconds(container: Doc): number {
  const preStop = container.lifecycle?.preStop;
  if (preStop?.sleep) return Number(preStop.sleep.seconds);
  const command: string[] = preStop?.exec?.command ?? [];
  return command[0] === 'sleep' && /^\d+$/.test(command[1] ?? '') ? Number(command[1]) : 0;
}

/** A container port by name or number. */
function resolvePort(container: Doc, port: string | number): number | undefined {
  if (typeof port === 'number') return (container.ports ?? []).some((p: Doc) => p.containerPort === port) ? port : undefined;
  return (container.ports ?? []).find((p: Doc) => p.name === port)?.containerPort;
}

function quantity(value: string | number): number {
  const text = String(value);
  const units: Record<string, number> = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };
  const match = /^(\d+(?:\.\d+)?)(m|k|M|G|Ki|Mi|Gi)?$/.exec(text);
  if (!match) throw new Error(`unsupported quantity ${text}`);
  return Number(match[1]) * (match[2] ? units[match[2]] : 1);
}

function selects(selector: Doc | undefined, labels: Record<string, string> | undefined): boolean {
  const wanted = selector?.matchLabels ?? selector ?? {};
  if (Object.keys(wanted).length === 0 || selector?.matchExpressions) return false;
  return Object.entries(wanted).every(([key, value]) => labels?.[key] === value);
}

function podLabels(deployment: Doc): Record<string, string> {
  return deployment.spec.template.metadata?.labels ?? {};
}

/** The Deployment running this entry point. */
function deploymentRunning(manifests: Manifest[], script: string): Doc | undefined {
  return containersOf(manifests).find((c) => c.owner.doc.kind === 'Deployment' && c.script === script)?.owner.doc;
}


/** A pod that opens a connection: its namespace (and that namespace's labels) and its own labels. */
interface PeerSource {
  namespace: string;
  namespaceLabels: Record<string, string>;
  podLabels: Record<string, string>;
}

/** A label selector as NetworkPolicies read it: `{}` selects everything. */
function labelSelectorMatches(selector: Doc, labels: Record<string, string>): boolean {
  if (selector.matchExpressions) throw new Error('matchExpressions are not evaluated here');
  return Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
}

/**
 * Whether the NetworkPolicies let `source` (null: an address outside the cluster) connect to
 * `port` of the target pod: a pod no Ingress policy selects accepts everything; a selected pod
 * accepts what some rule of a selecting policy admits (peers and ports; named ports resolved on
 * the pod's container).
 */
function admits(policies: Doc[], target: { namespace: string; labels: Record<string, string>; container: Doc }, port: number, source: PeerSource | null): boolean {
  const selecting = policies.filter(
    (p) => p.metadata.namespace === target.namespace && (p.spec.policyTypes ?? ['Ingress']).includes('Ingress') && labelSelectorMatches(p.spec.podSelector, target.labels),
  );
  if (selecting.length === 0) return true;
  return selecting.some((policy) =>
    (policy.spec.ingress ?? []).some((rule: Doc) => {
      const ports: Doc[] = rule.ports ?? [];
      const portOk = ports.length === 0 || ports.some((p) => (p.protocol ?? 'TCP') === 'TCP' && (p.port === undefined || resolvePort(target.container, p.port) === port));
      const peers: Doc[] = rule.from ?? [];
      const peerOk =
        peers.length === 0 ||
        peers.some((peer) => {
          if (peer.ipBlock) throw new Error('ipBlock peers are not evaluated here');
          if (source === null) return false;
          const namespaceOk = peer.namespaceSelector ? labelSelectorMatches(peer.namespaceSelector, source.namespaceLabels) : source.namespace === policy.metadata.namespace;
          return namespaceOk && (!peer.podSelector || labelSelectorMatches(peer.podSelector, source.podLabels));
        });
      return portOk && peerOk;
    }),
  );
}

/** The backend an Ingress sends `path` to (any host): the longest matching Exact or Prefix path. */
function ingressBackend(ingress: Doc, path: string): Doc | undefined {
  let best: { length: number; backend: Doc } | undefined;
  for (const rule of ingress.spec.rules ?? [])
    for (const entry of rule.http?.paths ?? []) {
      const p: string = entry.path;
      const hit =
        entry.pathType === 'Exact'
          ? path === p
          : entry.pathType === 'Prefix'
            ? p === '/' || path === p.replace(/\/$/, '') || path.startsWith(`${p.replace(/\/$/, '')}/`)
            : (() => {
                throw new Error(`pathType ${entry.pathType} is controller-specific`);
              })();
      if (hit && (!best || p.length > best.length)) best = { length: p.length, backend: entry.backend };
    }
  return best?.backend ?? ingress.spec.defaultBackend;
}

const isApi = (script: string | undefined): boolean => Boolean(script && ENTRY_POINTS[script]?.serves);

function clone<T>(value: T): T {
  return structuredClone(value);
}

// ---------------------------------------------------------------------------------------------

describe.each(OVERLAYS)('deploy/k8s/overlays/%s, deployed through the operator\'s overlay', (overlay) => {
const manifests = loadManifests(overlay);
const kustomization = readKustomization(join(K8S_DIR, 'overlays', overlay));
const baseNamespace = readKustomization(join(K8S_DIR, 'base')).namespace as string;

describe('manifests', () => {
  it('validate against the Kubernetes OpenAPI schema of their kind, with no unknown field', () => {
    expect(manifests.length).toBeGreaterThan(0);
    const problems = manifests.flatMap((m) => schemaProblems(m.doc).map((p) => `${name(m)}: ${p}`));
    expect(problems).toEqual([]);
  });

  it('the schema check catches a wrong type, a missing field and a misspelt field', () => {
    const deployment = clone(ofKind(manifests, 'Deployment')[0].doc);
    const container = deployment.spec.template.spec.containers[0];
    container.readinesProbe = container.readinessProbe;
    expect(schemaProblems(deployment)).toEqual(['unknown field /spec/template/spec/containers/0/readinesProbe']);
    const wrongType = clone(ofKind(manifests, 'Deployment')[0].doc);
    wrongType.spec.template.spec.terminationGracePeriodSeconds = 'thirty';
    expect(schemaProblems(wrongType).join()).toMatch(/terminationGracePeriodSeconds must be integer/);
    const missing = clone(ofKind(manifests, 'Service')[0].doc);
    delete missing.spec.ports[0].port;
    expect(schemaProblems(missing).join()).toMatch(/must have required property port/);
    const monitor = ofKind(manifests, 'ServiceMonitor')[0]?.doc;
    if (monitor) {
      const misspelt = clone(monitor);
      misspelt.spec.endpoints[0].intervall = '30s';
      expect(schemaProblems(misspelt)).toEqual(['unknown field /spec/endpoints/0/intervall']);
    }
    expect(schemaProblems({ apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler' })).toEqual([
      'no schema for apiVersion autoscaling/v1 kind HorizontalPodAutoscaler',
    ]);
  });

  it('put every namespaced object in the namespace of the base, which the Namespace creates', () => {
    const namespaces = ofKind(manifests, 'Namespace').map((m) => m.doc.metadata.name);
    expect(namespaces).toEqual([baseNamespace]);
    expect(kustomization.namespace).toBe(baseNamespace);
    const elsewhere = manifests
      .filter((m) => m.doc.kind !== 'Namespace' && m.doc.metadata.namespace !== baseNamespace)
      .map(name);
    expect(elsewhere).toEqual([]);
  });

  it('run every entry point of the build: each API and worker in a Deployment, the migrations in the Job', () => {
    expect(Object.keys(ENTRY_POINTS).sort()).toEqual(sourceEntryPoints());
    const deployed = containersOf(manifests).map((c) => `${c.owner.doc.kind} ${c.script}`);
    const expected = sourceEntryPoints().map((script) => `${script.endsWith('main-migrate.js') ? 'Job' : 'Deployment'} ${script}`);
    expect([...deployed].sort()).toEqual([...expected].sort());
    for (const script of Object.keys(ENTRY_POINTS)) expect(existsSync(join(ROOT, script)), script).toBe(true);
  });

  it('run the migrations in the order npm run migrate does, one after the other', () => {
    const jobs = ofKind(manifests, 'Job');
    expect(jobs).toHaveLength(1);
    const podSpec = jobs[0].doc.spec.template.spec;
    // Init containers run one at a time, in order, each only after the previous one succeeded.
    const steps = [...(podSpec.initContainers ?? []), ...podSpec.containers].map((c: Doc) => c.command[1]);
    expect(podSpec.containers).toHaveLength(1);
    expect(steps).toEqual(MIGRATIONS.map((m) => relative(ROOT, m.script)));
    expect(['OnFailure', 'Never']).toContain(podSpec.restartPolicy);
  });

  it('give every container the variables its process requires, only names it reads, and values its config accepts', () => {
    expect(containerProblems(manifests)).toEqual([]);
  });

  it('the environment check catches a missing, a misnamed, an invalid and a misplaced variable', () => {
    const broken = clone(manifests);
    const gateway = deploymentRunning(broken, 'services/gateway/dist/main-api.js')!;
    const env: Doc[] = gateway.spec.template.spec.containers[0].env;
    env.splice(env.findIndex((e) => e.name === 'INTERNAL_TOKEN'), 1);
    env.push({ name: 'UPSTREAM_TIMEOUT', value: '1000' });
    const config = byName(broken, 'ConfigMap', 'collab-config')!;
    config.data.CREDENTIALS_CACHE_TTL_MS = 'soon';
    config.data.FILE_URL_SECRET = 'a-secret-in-a-config-map';
    const problems = containerProblems(broken).filter((p) => p.includes('Deployment/gateway') || p.includes('conversation'));
    const gatewayWhere = 'Deployment/gateway (base/gateway.yaml) container gateway';
    expect(problems).toEqual(
      expect.arrayContaining([
        `${gatewayWhere}: sets UPSTREAM_TIMEOUT, which services/gateway/dist/main-api.js never reads`,
        `${gatewayWhere}: required INTERNAL_TOKEN is not provided`,
        expect.stringMatching(/gateway.*CREDENTIALS_CACHE_TTL_MS is invalid/s),
      ]),
    );
    // The conversation containers take FILE_URL_SECRET from the Secret (env wins over envFrom)...
    expect(problems.filter((p) => p.includes('FILE_URL_SECRET'))).toEqual([]);
    // ...and would be flagged without that reference.
    const conversation = deploymentRunning(broken, 'services/conversation/dist/main-api.js')!;
    const conversationEnv: Doc[] = conversation.spec.template.spec.containers[0].env;
    conversationEnv.splice(conversationEnv.findIndex((e) => e.name === 'FILE_URL_SECRET'), 1);
    expect(containerProblems(broken)).toContain(
      'Deployment/conversation (base/conversation.yaml) container conversation: FILE_URL_SECRET comes from a configMap, not the Secret',
    );
  });

  it('use every ConfigMap and Secret key in some process', () => {
    const refs = containersOf(manifests);
    const unused: string[] = [];
    for (const config of ofKind(manifests, 'ConfigMap')) {
      const readers = refs.filter((r) => (r.container.envFrom ?? []).some((f: Doc) => f.configMapRef?.name === config.doc.metadata.name));
      expect(readers.length, name(config)).toBeGreaterThan(0);
      for (const key of Object.keys(config.doc.data ?? {}))
        if (!readers.some((r) => r.script && ENTRY_POINTS[r.script] && readsVar(r.script, key))) unused.push(`${name(config)}: ${key}`);
    }
    for (const secret of ofKind(manifests, 'Secret')) {
      for (const key of Object.keys(secretData(secret.doc))) {
        const used = refs.some(({ container }) =>
          (container.env ?? []).some((e: Doc) => e.valueFrom?.secretKeyRef?.name === secret.doc.metadata.name && e.valueFrom.secretKeyRef.key === key),
        );
        if (!used) unused.push(`${name(secret)}: ${key}`);
      }
    }
    expect(unused).toEqual([]);
  });

  it('take the Secret from the operator\'s secrets.env, with random keys, and define it nowhere in the tracked files', () => {
    const secrets = ofKind(manifests, 'Secret');
    expect(secrets.map((m) => [m.doc.metadata.name, m.file])).toEqual([['collab-secrets', `local/${LOCAL_RUN}-${overlay}/kustomization.yaml`]]);
    const values = secretData(secrets[0].doc);
    const specs: Spec[] = Object.values(ENTRY_POINTS).map((e) => e.spec);
    const keys = Object.keys(values).filter((key) => specs.some((spec) => spec[key] && (isSecretVar(spec[key]) || isEncryptionKeyVar(spec[key]))));
    expect(keys.sort()).toEqual(['ACCESS_TOKEN_SECRET', 'FILE_URL_SECRET', 'INTERNAL_TOKEN', 'SECRETS_ENCRYPTION_KEY']);
    for (const key of keys) expect(values[key], key).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(keys.map((key) => values[key])).size).toBe(keys.length);
    expect([values.DATABASE_URL, values.REDIS_URL]).toEqual([OPERATOR.databaseUrl, OPERATOR.redisUrl]);
    // A known customer secret would let anyone mint application-management tokens: none unless the operator adds one.
    expect([values.CUSTOMER_ID, values.CUSTOMER_SECRET]).toEqual([undefined, undefined]);
    expect(readFileSync(join(OPERATOR_OVERLAYS[overlay], 'secrets.env'), 'utf8')).toContain(`SECRETS_ENCRYPTION_KEY=${values.SECRETS_ENCRYPTION_KEY}\n`);
    expect(statSync(join(OPERATOR_OVERLAYS[overlay], 'secrets.env')).mode & 0o077).toBe(0);
  });

  it("use one image, the one given to `npm run k8s-overlay`, for every container, and nothing the tracked overlay sets", () => {
    expect(kustomization.images).toBeUndefined();
    const images = new Set(containersOf(manifests).map((c) => c.container.image));
    expect([...images]).toEqual([OPERATOR.image]);
  });

  it.runIf(overlay === 'production')('serve the operator\'s host, with PUBLIC_URL set to it', () => {
    const ingress = ofKind(manifests, 'Ingress')[0].doc;
    expect(ingress.spec.rules.map((rule: Doc) => rule.host)).toEqual([OPERATOR.host]);
    expect(ingress.spec.tls.flatMap((tls: Doc) => tls.hosts)).toEqual([OPERATOR.host]);
    expect(byName(manifests, 'ConfigMap', 'collab-config')!.data.PUBLIC_URL).toBe(`https://${OPERATOR.host}`);
  });

  it('run every pod as non-root, without privilege escalation or capabilities, without API credentials', () => {
    const problems: string[] = [];
    for (const { owner, container, podSpec } of containersOf(manifests)) {
      const where = `${name(owner)} container ${container.name}`;
      const pod = podSpec.securityContext ?? {};
      const own = container.securityContext ?? {};
      if ((own.runAsNonRoot ?? pod.runAsNonRoot) !== true) problems.push(`${where}: runAsNonRoot is not true`);
      const uid = own.runAsUser ?? pod.runAsUser;
      // The image's user is `node` (a name): the kubelet can only check a numeric user.
      if (!(typeof uid === 'number' && uid > 0)) problems.push(`${where}: runAsUser is not a non-zero uid`);
      if (own.allowPrivilegeEscalation !== false) problems.push(`${where}: allowPrivilegeEscalation is not false`);
      if (!(own.capabilities?.drop ?? []).includes('ALL')) problems.push(`${where}: capabilities are not all dropped`);
      if (own.readOnlyRootFilesystem !== true) problems.push(`${where}: root filesystem is writable`);
      if (podSpec.automountServiceAccountToken !== false) problems.push(`${where}: mounts a service account token it never uses`);
      // Service links would add <SERVICE>_PORT, <SERVICE>_SERVICE_HOST... to every process's environment.
      if (podSpec.enableServiceLinks !== false) problems.push(`${where}: enableServiceLinks is not false`);
    }
    expect(problems).toEqual([]);
  });

  it('give every container CPU and memory requests and limits, requests within limits', () => {
    const problems: string[] = [];
    for (const { owner, container } of containersOf(manifests)) {
      const where = `${name(owner)} container ${container.name}`;
      for (const resource of ['cpu', 'memory']) {
        const request = container.resources?.requests?.[resource];
        const limit = container.resources?.limits?.[resource];
        if (request === undefined || limit === undefined) problems.push(`${where}: no ${resource} request or limit`);
        else if (quantity(request) > quantity(limit)) problems.push(`${where}: ${resource} request ${request} above limit ${limit}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('HTTP services', () => {
  const apis = containersOf(manifests).filter((c) => isApi(c.script));

  it('cover the gateway and every service', () => {
    expect(apis.map((c) => c.script).sort()).toEqual(Object.keys(ENTRY_POINTS).filter((s) => ENTRY_POINTS[s].serves).sort());
  });

  it('expose the port the process listens on (PORT) and probe it: readiness /readyz, liveness and startup /healthz', () => {
    const problems: string[] = [];
    for (const { owner, container, script } of apis) {
      const where = `${name(owner)} container ${container.name}`;
      const { env } = resolveEnv(manifests, container);
      const listens = env.PORT ? Number(env.PORT) : (ENTRY_POINTS[script!].spec.PORT.default as number);
      const ports: Doc[] = (container.ports ?? []).filter((p: Doc) => p.name !== 'metrics');
      if (ports.length !== 1 || ports[0].containerPort !== listens || ports[0].name !== 'http')
        problems.push(`${where}: listens on ${listens} but exposes ${JSON.stringify(ports.map((p) => p.containerPort))}`);
      const probes: [string, string | undefined][] = [
        ['readinessProbe', '/readyz'],
        ['livenessProbe', '/healthz'],
        ['startupProbe', container.startupProbe ? '/healthz' : undefined],
      ];
      for (const [probe, path] of probes) {
        if (!path) continue;
        const get = container[probe]?.httpGet;
        if (get?.path !== path) problems.push(`${where}: ${probe} is not GET ${path}`);
        else if (resolvePort(container, get.port) !== listens) problems.push(`${where}: ${probe} port ${get.port} is not ${listens}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('probe paths the apps serve: GET /healthz and /readyz answer 200', async () => {
    const logger = createLogger('k8s-test', 'silent');
    const apps = {
      service: createServiceApp({ service: 'identity', logger, internalToken: 'x'.repeat(32), routes: [], handlers: {}, readiness: [] }),
      gateway: createGatewayApp({
        logger,
        internalToken: 'x'.repeat(32),
        readiness: [],
        isDraining: () => false,
        authenticate: (() => Promise.reject(new Error('unused'))) as any,
        proxies: {} as any,
      } as any),
    };
    for (const { owner, container, script } of apis) {
      const app = apps[ENTRY_POINTS[script!].serves!];
      const server = http.createServer(app).listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      try {
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe']) {
          const path = container[probe]?.httpGet?.path;
          if (!path) continue;
          const response = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(5000) });
          expect(response.status, `${name(owner)} ${probe} ${path}`).toBe(200);
        }
      } finally {
        server.close();
      }
    }
  });

  it('stop taking traffic before SIGTERM and get more time than preStop + SHUTDOWN_TIMEOUT_MS', () => {
    const problems: string[] = [];
    for (const { owner, container, podSpec } of apis) {
      const where = `${name(owner)} container ${container.name}`;
      const sleep = preStopSeconds(container);
      if (sleep < 3) problems.push(`${where}: preStop does not sleep a few seconds (${sleep})`);
      const shutdownMs = Number(resolveEnv(manifests, container).env.SHUTDOWN_TIMEOUT_MS);
      const graceMs = (podSpec.terminationGracePeriodSeconds ?? 30) * 1000;
      if (!(graceMs > sleep * 1000 + shutdownMs))
        problems.push(`${where}: terminationGracePeriodSeconds ${graceMs / 1000} s <= preStop ${sleep} s + SHUTDOWN_TIMEOUT_MS ${shutdownMs} ms`);
    }
    expect(problems).toEqual([]);
  });

  it('are reached through a Service that selects them, at the URL the others use', () => {
    const problems: string[] = [];
    const deployments = ofKind(manifests, 'Deployment').map((m) => m.doc);
    // The headless metrics Service selects every pod (checked with the metrics ports).
    for (const service of ofKind(manifests, 'Service').filter((s) => s.doc.spec.clusterIP !== 'None')) {
      const selected = deployments.filter((d) => selects(service.doc.spec.selector, podLabels(d)));
      if (selected.length !== 1) {
        problems.push(`${name(service)} selects ${selected.length} Deployments`);
        continue;
      }
      const container = selected[0].spec.template.spec.containers[0];
      for (const port of service.doc.spec.ports)
        if (resolvePort(container, port.targetPort ?? port.port) === undefined)
          problems.push(`${name(service)}: targetPort ${port.targetPort} is no port of ${selected[0].metadata.name}`);
    }
    for (const { owner } of apis)
      if (!ofKind(manifests, 'Service').some((s) => selects(s.doc.spec.selector, podLabels(owner.doc))))
        problems.push(`${name(owner)} has no Service`);
    // IDENTITY_URL, CONVERSATION_URL, NOTIFICATION_URL: http://<Service>:<port> of that service's API.
    for (const { owner, container, script } of containersOf(manifests)) {
      if (!script) continue;
      const { env } = resolveEnv(manifests, container);
      const serviceUrlVars = Object.keys(ENTRY_POINTS[script].spec).filter((v) =>
        isApi(`services/${v.replace(/_URL$/, '').toLowerCase()}/dist/main-api.js`),
      );
      for (const varName of serviceUrlVars) {
        const target = varName.replace(/_URL$/, '').toLowerCase();
        const url = new URL(env[varName] || 'http://unset');
        const service = byName(manifests, 'Service', url.hostname);
        const api = deploymentRunning(manifests, `services/${target}/dist/main-api.js`);
        const port = service?.spec.ports.find((p: Doc) => String(p.port) === (url.port || '80'));
        if (!service || !api || !port || !selects(service.spec.selector, podLabels(api)))
          problems.push(`${name(owner)}: ${varName}=${env[varName]} does not reach the ${target} API's Service`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('scaling and disruption', () => {
  const deployments = ofKind(manifests, 'Deployment');
  const hpas = ofKind(manifests, 'HorizontalPodAutoscaler');

  it('select their own pods: each Deployment selector matches its template and no other Deployment', () => {
    const problems: string[] = [];
    for (const deployment of deployments) {
      if (!selects(deployment.doc.spec.selector, podLabels(deployment.doc))) problems.push(`${name(deployment)} does not select its pods`);
      for (const other of deployments)
        if (other !== deployment && selects(deployment.doc.spec.selector, podLabels(other.doc)))
          problems.push(`${name(deployment)} also selects the pods of ${name(other)}`);
    }
    expect(problems).toEqual([]);
  });

  it.runIf(overlay === 'small')('run one pod of every Deployment, without autoscalers or disruption budgets', () => {
    expect(deployments.map((d) => [d.doc.metadata.name, d.doc.spec.replicas]).filter(([, replicas]) => replicas !== 1)).toEqual([]);
    expect(hpas).toEqual([]);
    expect(ofKind(manifests, 'PodDisruptionBudget')).toEqual([]);
  });

  it.runIf(overlay === 'production')('autoscale the gateway and the conversation service on CPU, with requests to measure against', () => {
    const targets = hpas.map((hpa) => {
      const ref = hpa.doc.spec.scaleTargetRef;
      expect(ref.apiVersion).toBe('apps/v1');
      expect(ref.kind).toBe('Deployment');
      const deployment = byName(manifests, 'Deployment', ref.name);
      expect(deployment, name(hpa)).toBeDefined();
      const scripts = deployment!.spec.template.spec.containers.map((c: Doc) => c.command[1]);
      for (const metric of hpa.doc.spec.metrics ?? [])
        if (metric.type === 'Resource')
          for (const container of deployment!.spec.template.spec.containers)
            expect(container.resources?.requests?.[metric.resource.name], `${name(hpa)} ${container.name}`).toBeDefined();
      // The autoscaler owns the count: a replicas field would reset it on every apply.
      expect(deployment!.spec.replicas, `${ref.name} replicas`).toBeUndefined();
      expect(hpa.doc.spec.minReplicas).toBeGreaterThanOrEqual(2);
      expect(hpa.doc.spec.maxReplicas).toBeGreaterThan(hpa.doc.spec.minReplicas);
      return scripts[0];
    });
    expect(targets.sort()).toEqual(['services/conversation/dist/main-api.js', 'services/gateway/dist/main-api.js']);
  });

  it.runIf(overlay === 'production')('run at least two replicas of every HTTP service, so that a disruption leaves one serving', () => {
    const scaled = new Set(hpas.map((h) => h.doc.spec.scaleTargetRef.name));
    for (const { owner } of containersOf(manifests).filter((c) => isApi(c.script)))
      if (!scaled.has(owner.doc.metadata.name)) expect(owner.doc.spec.replicas, name(owner)).toBeGreaterThanOrEqual(2);
  });

  it.runIf(overlay === 'production')('give every Deployment exactly one PodDisruptionBudget', () => {
    const pdbs = ofKind(manifests, 'PodDisruptionBudget');
    const problems: string[] = [];
    for (const deployment of deployments) {
      const budgets = pdbs.filter((p) => selects(p.doc.spec.selector, podLabels(deployment.doc)));
      if (budgets.length !== 1) problems.push(`${name(deployment)} has ${budgets.length} PodDisruptionBudgets`);
    }
    for (const pdb of pdbs) {
      if (!deployments.some((d) => selects(pdb.doc.spec.selector, podLabels(d.doc)))) problems.push(`${name(pdb)} selects no Deployment`);
      // minAvailable: 1 on a one-replica Deployment would block every node drain.
      if (pdb.doc.spec.maxUnavailable === undefined) problems.push(`${name(pdb)} does not use maxUnavailable`);
    }
    expect(problems).toEqual([]);
  });

  it('give workers a longer grace period than the APIs, above their SHUTDOWN_TIMEOUT_MS, so the active job can finish', () => {
    const refs = containersOf(manifests).filter((c) => c.owner.doc.kind === 'Deployment');
    const workers = refs.filter((c) => c.script?.endsWith('main-worker.js'));
    expect(workers).toHaveLength(5);
    const longestApiGrace = Math.max(...refs.filter((c) => isApi(c.script)).map((c) => c.podSpec.terminationGracePeriodSeconds ?? 30));
    for (const { owner, container, podSpec } of workers) {
      expect((container.ports ?? []).map((p: Doc) => p.name), name(owner)).toEqual(['metrics']);
      const grace = podSpec.terminationGracePeriodSeconds ?? 30;
      const shutdownMs = Number(resolveEnv(manifests, container).env.SHUTDOWN_TIMEOUT_MS);
      expect(grace, name(owner)).toBeGreaterThan(longestApiGrace);
      expect(grace * 1000, name(owner)).toBeGreaterThan(shutdownMs);
      const apiShutdownMs = Number(byName(manifests, 'ConfigMap', 'collab-config')!.data.SHUTDOWN_TIMEOUT_MS);
      expect(shutdownMs, name(owner)).toBeGreaterThan(apiShutdownMs);
    }
  });
});

describe('memory, metrics and network access', () => {
  const deployments = ofKind(manifests, 'Deployment');

  it('give every process the heap limit and memory limit of PROCESS_MEMORY (scripts/processes.mjs)', () => {
    expect(deployments.map((d) => d.doc.metadata.name).sort()).toEqual(Object.keys(PROCESS_MEMORY).sort());
    const problems: string[] = [];
    for (const deployment of deployments) {
      const { heapMb, limitMb } = PROCESS_MEMORY[deployment.doc.metadata.name];
      const container = deployment.doc.spec.template.spec.containers[0];
      const { env } = resolveEnv(manifests, container);
      if (env.NODE_OPTIONS !== `--max-old-space-size=${heapMb}`) problems.push(`${name(deployment)}: NODE_OPTIONS ${env.NODE_OPTIONS}, not --max-old-space-size=${heapMb}`);
      const limit = container.resources?.limits?.memory;
      if (limit === undefined || quantity(limit) !== limitMb * 1024 ** 2) problems.push(`${name(deployment)}: memory limit ${limit}, not ${limitMb}Mi`);
    }
    expect(problems).toEqual([]);
  });

  it('declare each process\'s metrics port (METRICS_PORT), annotate it for scraping, and reach it through the headless metrics Service', () => {
    const problems: string[] = [];
    const headless = ofKind(manifests, 'Service').filter((s) => s.doc.spec.clusterIP === 'None');
    expect(headless.map((s) => s.doc.metadata.name)).toEqual(['metrics']);
    const metricsService = headless[0].doc;
    expect(metricsService.spec.ports.map((p: Doc) => [p.name, p.targetPort])).toEqual([['metrics', 'metrics']]);
    for (const deployment of deployments) {
      const container = deployment.doc.spec.template.spec.containers[0];
      const { env } = resolveEnv(manifests, container);
      const port = Number(env.METRICS_PORT);
      const declared = resolvePort(container, 'metrics');
      if (!(port > 0) || declared !== port) problems.push(`${name(deployment)}: METRICS_PORT ${env.METRICS_PORT}, container port metrics ${declared}`);
      const annotations = deployment.doc.spec.template.metadata?.annotations ?? {};
      if (annotations['prometheus.io/scrape'] !== 'true' || annotations['prometheus.io/port'] !== String(port) || annotations['prometheus.io/path'] !== '/metrics')
        problems.push(`${name(deployment)}: scrape annotations ${JSON.stringify(annotations)} do not name port ${port} and /metrics`);
      if (!selects(metricsService.spec.selector, podLabels(deployment.doc))) problems.push(`${name(deployment)}: not selected by the metrics Service`);
    }
    expect(problems).toEqual([]);
  });

  it('admit from outside only the gateway\'s public port; the namespace reaches every port, the monitoring namespace every metrics port', () => {
    const policies = ofKind(manifests, 'NetworkPolicy').map((m) => m.doc);
    const namespaceLabels = (ns: string) => ({ ...(byName(manifests, 'Namespace', ns)?.metadata.labels ?? {}), 'kubernetes.io/metadata.name': ns });
    const gateway = deploymentRunning(manifests, 'services/gateway/dist/main-api.js')!;
    const sources: Record<string, PeerSource | null> = {
      outside: null,
      'other namespace': { namespace: 'shop', namespaceLabels: namespaceLabels('shop'), podLabels: { 'app.kubernetes.io/name': 'shop' } },
      monitoring: { namespace: 'monitoring', namespaceLabels: namespaceLabels('monitoring'), podLabels: { 'app.kubernetes.io/name': 'prometheus' } },
      'same namespace': { namespace: baseNamespace, namespaceLabels: namespaceLabels(baseNamespace), podLabels: podLabels(gateway) },
    };
    const admitted: string[] = [];
    const expected: string[] = [];
    for (const deployment of deployments) {
      const container = deployment.doc.spec.template.spec.containers[0];
      const target = { namespace: deployment.doc.metadata.namespace, labels: podLabels(deployment.doc), container };
      for (const port of container.ports as Doc[]) {
        const to = `${deployment.doc.metadata.name}:${port.name}`;
        for (const [from, source] of Object.entries(sources)) if (admits(policies, target, port.containerPort, source)) admitted.push(`${from} -> ${to}`);
        expected.push(`same namespace -> ${to}`);
        if (port.name === 'metrics') expected.push(`monitoring -> ${to}`);
        if (deployment.doc.metadata.name === 'gateway' && port.name === 'http')
          expected.push(`outside -> ${to}`, `other namespace -> ${to}`, `monitoring -> ${to}`);
      }
    }
    expect(admitted.sort()).toEqual(expected.sort());
  });

  it.runIf(overlay === 'production')('scrape every process with a ServiceMonitor that selects the metrics Service and names the process in job', () => {
    const monitors = ofKind(manifests, 'ServiceMonitor').map((m) => m.doc);
    expect(monitors).toHaveLength(1);
    const [monitor] = monitors;
    expect(monitor.spec.namespaceSelector).toBeUndefined();
    const selected = ofKind(manifests, 'Service').filter(
      (s) => s.doc.metadata.namespace === monitor.metadata.namespace && selects(monitor.spec.selector, s.doc.metadata.labels),
    );
    expect(selected.map((s) => s.doc.metadata.name)).toEqual(['metrics']);
    expect(monitor.spec.endpoints).toHaveLength(1);
    const [endpoint] = monitor.spec.endpoints;
    expect(selected[0].doc.spec.ports.map((p: Doc) => p.name)).toContain(endpoint.port);
    expect(endpoint.path).toBe('/metrics');
    // The dashboard groups by job: the process's name, from its pods' app.kubernetes.io/name.
    expect(endpoint.relabelings).toContainEqual({ sourceLabels: ['__meta_kubernetes_pod_label_app_kubernetes_io_name'], targetLabel: 'job' });
  });

  it.runIf(overlay === 'production')('route the public API to the gateway through the Ingress, and never /admin/, /healthz or /readyz', () => {
    const ingresses = ofKind(manifests, 'Ingress').map((m) => m.doc);
    expect(ingresses).toHaveLength(1);
    const [ingress] = ingresses;
    expect(ingress.spec.defaultBackend).toBeUndefined();
    const gatewayService = byName(manifests, 'Service', 'gateway')!;
    const gateway = deploymentRunning(manifests, 'services/gateway/dist/main-api.js')!;
    expect(selects(gatewayService.spec.selector, podLabels(gateway))).toBe(true);
    const routed = (path: string) => ingressBackend(ingress, path);
    for (const path of ['/v1/users/alice', '/v1/openapi.json', '/docs', '/docs/swagger-ui.css'])
      expect(routed(path), path).toEqual({ service: { name: 'gateway', port: { name: 'http' } } });
    expect(gatewayService.spec.ports.map((p: Doc) => p.name)).toContain('http');
    for (const path of ['/admin/queues', '/admin/queues/api/queues', '/admin', '/healthz', '/readyz', '/metrics', '/v1admin'])
      expect(routed(path), path).toBeUndefined();
  });
});
});

describe('deploy/k8s layout', () => {
  /** The kustomization directories the overlays use, and the files they name (resources, patches). */
  function usedFiles(dir: string, seen = new Set<string>()): Set<string> {
    const kustomization = readKustomization(dir);
    seen.add(join(dir, 'kustomization.yaml'));
    for (const resource of kustomization.resources ?? []) {
      const path = join(dir, resource);
      if (statSync(path).isDirectory()) usedFiles(path, seen);
      else seen.add(path);
    }
    for (const patch of kustomization.patches ?? []) if (patch.path) seen.add(join(dir, patch.path));
    return seen;
  }

  function yamlFiles(dir: string): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? yamlFiles(join(dir, entry.name)) : /\.ya?ml$/.test(entry.name) ? [join(dir, entry.name)] : [],
    );
  }

  it('uses every YAML file under deploy/k8s in an overlay, each defining its objects once', () => {
    const used = new Set<string>();
    for (const overlay of OVERLAYS) for (const file of usedFiles(join(K8S_DIR, 'overlays', overlay))) used.add(file);
    const tracked = yamlFiles(K8S_DIR).filter((file) => !relative(K8S_DIR, file).startsWith('local/'));
    expect(tracked.filter((file) => !used.has(file)).map((file) => relative(K8S_DIR, file))).toEqual([]);
    for (const overlay of OVERLAYS) {
      const ids = loadManifests(overlay).map((m) => `${m.doc.kind}/${m.doc.metadata.namespace ?? ''}/${m.doc.metadata.name}`);
      expect(ids.filter((id, i) => ids.indexOf(id) !== i), overlay).toEqual([]);
    }
  });

  it('the renderer refuses what it does not reproduce rather than rendering something else', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kustomize-'));
    try {
      const write = (kustomization: string, extra: Record<string, string> = {}) => {
        writeFileSync(join(dir, 'kustomization.yaml'), `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n${kustomization}`);
        for (const [file, text] of Object.entries(extra)) writeFileSync(join(dir, file), text);
      };
      const configMap = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  A: "1"\n';
      write('commonLabels:\n  a: b\nresources:\n  - c.yaml\n', { 'c.yaml': configMap });
      expect(() => renderKustomization(dir)).toThrow(/unsupported fields commonLabels/);
      write('resources:\n  - c.yaml\npatches:\n  - path: p.yaml\n', { 'p.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\nlist: [1]\n' });
      expect(() => renderKustomization(dir)).toThrow(/list at \/list: not supported/);
      write('resources:\n  - c.yaml\npatches:\n  - target:\n      kind: ConfigMap\n    patch: |-\n      - op: remove\n        path: /data/B\n');
      expect(() => renderKustomization(dir)).toThrow(/remove \/data\/B: no such path/);
      write('resources:\n  - c.yaml\npatches:\n  - target:\n      kind: ConfigMap\n    patch: |-\n      - op: replace\n        path: /data/A\n        value: "2"\n');
      expect(renderKustomization(dir).map((o) => o.doc.data)).toEqual([{ A: '2' }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const kubectl = process.env.PATH?.split(delimiter).map((dir) => join(dir, 'kubectl')).find((path) => existsSync(path));

  // kubectl is not a Debian package, so CI may lack it; where it is installed, it is the reference.
  it.runIf(kubectl !== undefined)('renders each overlay exactly as `kubectl kustomize` does', () => {
    const key = (doc: Doc) => `${doc.kind}/${doc.metadata?.namespace ?? ''}/${doc.metadata?.name}`;
    const sorted = (docs: Doc[]) => [...docs].sort((a, b) => key(a).localeCompare(key(b)));
    for (const overlay of OVERLAYS) {
      const output = execFileSync(kubectl!, ['kustomize', OPERATOR_OVERLAYS[overlay]], { encoding: 'utf8', timeout: 60_000 });
      // kubectl wraps a Secret's base64 values into lines; the API server decodes them alike.
      const theirs = parseAllDocuments(output).map((d) => d.toJS() as Doc);
      for (const doc of theirs)
        if (doc.kind === 'Secret') for (const key of Object.keys(doc.data ?? {})) doc.data[key] = String(doc.data[key]).replace(/\s/g, '');
      expect(sorted(loadManifests(overlay).map((m) => m.doc)), overlay).toEqual(sorted(theirs));
    }
    // The other shape the command writes: an existing Secret, no ServiceMonitor, another monitoring namespace.
    const variant = k8sOverlay('kubectl', ['production', '--image', OPERATOR.image, '--existing-secret', '--without-service-monitor', '--monitoring-namespace', 'observability']);
    expect(variant.status, variant.output).toBe(0);
    const output = execFileSync(kubectl!, ['kustomize', variant.dir], { encoding: 'utf8', timeout: 60_000 });
    const theirs = parseAllDocuments(output).map((d) => d.toJS() as Doc);
    expect(sorted(renderKustomization(variant.dir, K8S_DIR).map((m) => m.doc))).toEqual(sorted(theirs));
  });
});

describe('npm run k8s-overlay', () => {
  const secretsOf = (dir: string) => readFileSync(join(dir, 'secrets.env'), 'utf8');

  it('writes only git-ignored files, and keeps secrets.env and config.env when run again', () => {
    const first = k8sOverlay('again', ['small', '--image', 'registry.example.com/collab-backend:1', '--database-url', OPERATOR.databaseUrl, '--redis-url', OPERATOR.redisUrl]);
    expect(first.status, first.output).toBe(0);
    const secrets = secretsOf(first.dir);
    writeFileSync(join(first.dir, 'config.env'), 'LOG_LEVEL=debug\n');
    // Run again for a new image: the keys that encrypt the stored secrets must not change.
    const second = k8sOverlay('again', ['small', '--image', 'registry.example.com/collab-backend@sha256:' + 'a'.repeat(64)]);
    expect(second.status, second.output).toBe(0);
    expect(second.output).toMatch(/kept deploy\/k8s\/local\/.*secrets\.env/);
    expect(secretsOf(second.dir)).toBe(secrets);
    const manifests = renderKustomization(second.dir, K8S_DIR);
    expect(new Set(containersOf(manifests).map((c) => c.container.image))).toEqual(new Set([`registry.example.com/collab-backend@sha256:${'a'.repeat(64)}`]));
    expect(byName(manifests, 'ConfigMap', 'collab-config')!.data.LOG_LEVEL).toBe('debug');
    const files = readdirSync(second.dir).map((file) => join(second.dir, file));
    expect(files.length).toBe(3);
    const ignored = execFileSync('git', ['check-ignore', ...files], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n');
    expect(ignored.length).toBe(files.length);
  });

  it('with --existing-secret, defines no Secret, so that applying never replaces the one the operator created', () => {
    const { dir, status, output } = k8sOverlay('existing', ['small', '--image', OPERATOR.image, '--existing-secret']);
    expect(status, output).toBe(0);
    expect(existsSync(join(dir, 'secrets.env'))).toBe(false);
    const manifests = renderKustomization(dir, K8S_DIR);
    expect(ofKind(manifests, 'Secret')).toEqual([]);
    // Every process reads the Secret by the name the operator is told to create.
    const names = containersOf(manifests).flatMap(({ container }) => [
      ...(container.envFrom ?? []).map((from: Doc) => from.secretRef?.name),
      ...(container.env ?? []).map((entry: Doc) => entry.valueFrom?.secretKeyRef?.name),
    ]);
    expect(new Set(names.filter(Boolean))).toEqual(new Set(['collab-secrets']));
  });

  it('with --without-service-monitor, leaves the ServiceMonitor out; with --monitoring-namespace, admits that namespace to the metrics ports', () => {
    const args = ['production', '--image', OPERATOR.image, '--existing-secret', '--without-service-monitor', '--monitoring-namespace', 'observability'];
    const { dir, status, output } = k8sOverlay('no-monitor', args);
    expect(status, output).toBe(0);
    const manifests = renderKustomization(dir, K8S_DIR);
    expect(ofKind(manifests, 'ServiceMonitor')).toEqual([]);
    expect(ofKind(manifests, 'Deployment').length).toBeGreaterThan(0);
    const scrape = byName(manifests, 'NetworkPolicy', 'allow-metrics-scrape')!;
    expect(scrape.spec.ingress[0].from).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'observability' } } }]);
  });

  it('refuses incomplete or malformed inputs, naming what is wrong', () => {
    const refused = (args: string[]) => {
      const { status, output } = k8sOverlay('refused', args);
      expect(status, output).toBe(2);
      return output;
    };
    expect(refused(['small', '--database-url', OPERATOR.databaseUrl, '--redis-url', OPERATOR.redisUrl])).toMatch(/--image is required/);
    expect(refused(['small', '--image', 'collab-backend'])).toMatch(/--image "collab-backend" is not <registry\/name>:<tag>/);
    expect(refused(['small', '--image', OPERATOR.image, '--redis-url', OPERATOR.redisUrl])).toMatch(/--database-url is required/);
    expect(refused(['small', '--image', OPERATOR.image, '--database-url', 'mysql://x', '--redis-url', OPERATOR.redisUrl])).toMatch(/--database-url must be a postgres:\/\/ URL/);
    expect(refused(['medium', '--image', OPERATOR.image, '--existing-secret'])).toMatch(/no overlay "medium"/);
    expect(refused(['small', '--image', OPERATOR.image, '--existing-secret', '--without-service-monitor'])).toMatch(/has no ServiceMonitor/);
    expect(refused(['production', '--image', OPERATOR.image, '--existing-secret', '--host', 'https://x'])).toMatch(/--host "https:\/\/x" is not a DNS name/);
  });

  it('the renderer refuses generators whose names kustomize would suffix with a hash', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kustomize-'));
    try {
      writeFileSync(join(dir, 'kustomization.yaml'), 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nsecretGenerator:\n  - name: s\n    literals:\n      - A=1\n');
      expect(() => renderKustomization(dir)).toThrow(/disableNameSuffixHash: true/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

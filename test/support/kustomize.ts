/**
 * Renders a kustomization as `kubectl kustomize` does, for the subset deploy/k8s and the operator's
 * overlays (scripts/k8s-overlay.mjs) use, so that the manifests an overlay applies can be checked
 * without kubectl (CI installs none: Debian has no kubectl package). Supported: `resources` (files,
 * and directories holding a kustomization), `namespace`, `images` (newName, newTag, digest),
 * `patches`, either a strategic-merge patch of maps and scalars (no lists: their merge keys are not
 * reproduced here; `$patch: delete` removes the object) or JSON 6902 operations (add, replace,
 * remove) on a `target` kind and name, and `secretGenerator` / `configMapGenerator` (`envs`,
 * `literals`; a ConfigMap with `behavior: merge`) with `generatorOptions.disableNameSuffixHash`
 * (the hash suffix and the rewriting of references to it are not reproduced). Any other field, or
 * a patch outside that subset, is refused rather than rendered differently from kustomize.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';

type Doc = Record<string, any>;

export interface RenderedObject {
  /** Where the object was defined, relative to `root` (e.g. base/gateway.yaml). */
  file: string;
  doc: Doc;
}

const SUPPORTED_FIELDS = new Set(['apiVersion', 'kind', 'namespace', 'resources', 'images', 'patches', 'secretGenerator', 'configMapGenerator', 'generatorOptions']);

/** Kinds that live outside namespaces among those deploy/k8s uses. */
const CLUSTER_SCOPED = new Set(['Namespace']);

function readYaml(path: string): Doc[] {
  const docs: Doc[] = [];
  for (const parsed of parseAllDocuments(readFileSync(path, 'utf8'))) {
    if (parsed.errors.length > 0) throw new Error(`${path}: ${parsed.errors.map((e) => e.message).join('; ')}`);
    const doc = parsed.toJS() as Doc | null;
    if (doc !== null) docs.push(doc);
  }
  return docs;
}

function parseYamlText(text: string, where: string): unknown {
  const docs = parseAllDocuments(text);
  if (docs.length !== 1 || docs[0].errors.length > 0) throw new Error(`${where}: not one YAML document`);
  return docs[0].toJS();
}

export function readKustomization(dir: string): Doc {
  const [doc] = readYaml(join(dir, 'kustomization.yaml'));
  if (doc?.apiVersion !== 'kustomize.config.k8s.io/v1beta1' || doc.kind !== 'Kustomization')
    throw new Error(`${dir}/kustomization.yaml is not a kustomize.config.k8s.io/v1beta1 Kustomization`);
  const unsupported = Object.keys(doc).filter((key) => !SUPPORTED_FIELDS.has(key));
  if (unsupported.length > 0) throw new Error(`${dir}/kustomization.yaml: unsupported fields ${unsupported.join(', ')}`);
  return doc;
}

function matches(object: Doc, target: { kind?: string; name?: string; namespace?: string }): boolean {
  return (
    (target.kind === undefined || object.kind === target.kind) &&
    (target.name === undefined || object.metadata?.name === target.name) &&
    (target.namespace === undefined || (object.metadata?.namespace ?? '') === target.namespace)
  );
}

/** Strategic merge limited to maps and scalars: maps merge key by key, `null` deletes a key. */
function mergeMaps(into: Doc, patch: Doc, path: string): void {
  for (const [key, value] of Object.entries(patch)) {
    if (Array.isArray(value)) throw new Error(`strategic-merge patch with a list at ${path}/${key}: not supported by this renderer`);
    if (value === null) delete into[key];
    else if (typeof value === 'object') {
      if (typeof into[key] !== 'object' || into[key] === null || Array.isArray(into[key])) into[key] = {};
      mergeMaps(into[key], value as Doc, `${path}/${key}`);
    } else into[key] = value;
  }
}

/** JSON pointer segments (RFC 6901). */
function pointer(path: string): string[] {
  if (!path.startsWith('/')) throw new Error(`not a JSON pointer: ${path}`);
  return path
    .slice(1)
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function applyJson6902(object: Doc, operations: Doc[], where: string): void {
  for (const operation of operations) {
    const segments = pointer(operation.path);
    const last = segments.pop()!;
    let parent: any = object;
    for (const segment of segments) {
      parent = parent?.[Array.isArray(parent) ? Number(segment) : segment];
      if (parent === undefined) throw new Error(`${where}: ${operation.op} ${operation.path}: no such path`);
    }
    const exists = Array.isArray(parent) ? Number(last) < parent.length : last in parent;
    switch (operation.op) {
      case 'remove':
        if (!exists) throw new Error(`${where}: remove ${operation.path}: no such path`);
        if (Array.isArray(parent)) parent.splice(Number(last), 1);
        else delete parent[last];
        break;
      case 'replace':
        if (!exists) throw new Error(`${where}: replace ${operation.path}: no such path`);
        parent[Array.isArray(parent) ? Number(last) : last] = operation.value;
        break;
      case 'add':
        if (Array.isArray(parent)) parent.splice(last === '-' ? parent.length : Number(last), 0, operation.value);
        else parent[last] = operation.value;
        break;
      default:
        throw new Error(`${where}: JSON 6902 operation ${operation.op} is not supported by this renderer`);
    }
  }
}

/** An env file as kustomize reads one: `KEY=VALUE` lines, `#` comments and blank lines skipped, values as written. */
function readEnvFile(path: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [index, raw] of readFileSync(path, 'utf8').split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const at = line.indexOf('=');
    if (at <= 0) throw new Error(`${path}:${index + 1}: not KEY=VALUE`);
    values[line.slice(0, at)] = line.slice(at + 1);
  }
  return values;
}

/** The key-value pairs of a generator: its env files, then its literals. */
function generatorData(dir: string, generator: Doc, where: string): Record<string, string> {
  const unsupported = Object.keys(generator).filter((key) => !['name', 'namespace', 'envs', 'literals', 'behavior', 'type'].includes(key));
  if (unsupported.length > 0) throw new Error(`${where}: ${unsupported.join(', ')} not supported by this renderer`);
  const data: Record<string, string> = {};
  for (const file of generator.envs ?? []) Object.assign(data, readEnvFile(join(dir, file)));
  for (const literal of generator.literals ?? []) {
    const at = String(literal).indexOf('=');
    data[String(literal).slice(0, at)] = String(literal).slice(at + 1);
  }
  return data;
}

/** The objects of `secretGenerator` and `configMapGenerator`; a ConfigMap with `behavior: merge` merges into `objects`. */
function generate(dir: string, kustomization: Doc, objects: RenderedObject[], root: string): RenderedObject[] {
  const where = `${relative(root, dir) || '.'}/kustomization.yaml`;
  if (!kustomization.secretGenerator && !kustomization.configMapGenerator) return [];
  const options = kustomization.generatorOptions ?? {};
  if (options.disableNameSuffixHash !== true) throw new Error(`${where}: generators need generatorOptions.disableNameSuffixHash: true (hash suffixes are not reproduced)`);
  const unsupportedOptions = Object.keys(options).filter((key) => !['disableNameSuffixHash', 'labels'].includes(key));
  if (unsupportedOptions.length > 0) throw new Error(`${where}: generatorOptions ${unsupportedOptions.join(', ')} not supported by this renderer`);
  const metadata = (generator: Doc): Doc => ({
    name: generator.name,
    ...(generator.namespace ? { namespace: generator.namespace } : {}),
    ...(options.labels ? { labels: { ...options.labels } } : {}),
  });
  const generated: RenderedObject[] = [];
  for (const generator of kustomization.secretGenerator ?? []) {
    if ((generator.behavior ?? 'create') !== 'create') throw new Error(`${where}: secretGenerator behavior ${generator.behavior} not supported by this renderer`);
    const data = Object.fromEntries(Object.entries(generatorData(dir, generator, where)).map(([key, value]) => [key, Buffer.from(value).toString('base64')]));
    generated.push({ file: where, doc: { apiVersion: 'v1', kind: 'Secret', metadata: metadata(generator), type: generator.type ?? 'Opaque', data } });
  }
  for (const generator of kustomization.configMapGenerator ?? []) {
    const data = generatorData(dir, generator, where);
    const behavior = generator.behavior ?? 'create';
    if (behavior === 'create') generated.push({ file: where, doc: { apiVersion: 'v1', kind: 'ConfigMap', metadata: metadata(generator), data } });
    else if (behavior === 'merge') {
      const found = objects.filter((o) => matches(o.doc, { kind: 'ConfigMap', name: generator.name, namespace: generator.namespace }));
      if (found.length !== 1) throw new Error(`${where}: configMapGenerator ${generator.name} merges into ${found.length} ConfigMaps`);
      found[0].doc.data = { ...found[0].doc.data, ...data };
      if (options.labels) found[0].doc.metadata.labels = { ...found[0].doc.metadata.labels, ...options.labels };
    } else throw new Error(`${where}: configMapGenerator behavior ${behavior} not supported by this renderer`);
  }
  return generated;
}

function setImages(object: Doc, images: Doc[]): void {
  const podSpec = object.spec?.template?.spec;
  if (!podSpec) return;
  for (const container of [...(podSpec.initContainers ?? []), ...(podSpec.containers ?? [])]) {
    const image = images.find((i) => i.name === String(container.image).split(':')[0]);
    if (!image) continue;
    const unsupported = Object.keys(image).filter((key) => !['name', 'newName', 'newTag', 'digest'].includes(key));
    if (unsupported.length > 0) throw new Error(`images: ${unsupported.join(', ')} not supported by this renderer`);
    const [name, tag] = String(container.image).split(':');
    const version = image.digest !== undefined ? `@${image.digest}` : image.newTag !== undefined ? `:${image.newTag}` : tag !== undefined ? `:${tag}` : '';
    container.image = `${image.newName ?? name}${version}`;
  }
}

/** The objects `kubectl kustomize <dir>` prints, each with the file that defined it (relative to root). */
export function renderKustomization(dir: string, root: string = dir): RenderedObject[] {
  const kustomization = readKustomization(dir);
  const objects: RenderedObject[] = [];
  for (const resource of kustomization.resources ?? []) {
    const path = join(dir, resource);
    if (!existsSync(path)) throw new Error(`${dir}/kustomization.yaml: resource ${resource} does not exist`);
    if (statSync(path).isDirectory()) objects.push(...renderKustomization(path, root));
    else objects.push(...readYaml(path).map((doc) => ({ file: relative(root, path), doc })));
  }
  objects.push(...generate(dir, kustomization, objects, root));
  for (const [index, entry] of (kustomization.patches ?? []).entries()) {
    const where = `${relative(root, dir) || '.'}/kustomization.yaml patches[${index}]`;
    const text = entry.path !== undefined ? readFileSync(join(dir, entry.path), 'utf8') : entry.patch;
    const parsed = entry.path !== undefined ? readYaml(join(dir, entry.path)) : [parseYamlText(text, where)];
    if (Array.isArray(parsed[0])) {
      if (!entry.target) throw new Error(`${where}: JSON 6902 operations need a target`);
      const targets = objects.filter((o) => matches(o.doc, entry.target));
      if (targets.length === 0) throw new Error(`${where}: no object matches ${JSON.stringify(entry.target)}`);
      for (const target of targets) applyJson6902(target.doc, parsed[0] as Doc[], where);
      continue;
    }
    for (const patch of parsed as Doc[]) {
      // As kustomize: a patch without a namespace matches only objects without one.
      const target = { kind: patch.kind, name: patch.metadata?.name, namespace: patch.metadata?.namespace ?? '' };
      const found = objects.filter((o) => matches(o.doc, target) && matches(o.doc, entry.target ?? {}));
      if (found.length !== 1) throw new Error(`${where}: ${found.length} objects match ${JSON.stringify(target)}`);
      if (patch.$patch === 'delete') {
        objects.splice(objects.indexOf(found[0]), 1);
        continue;
      }
      const { apiVersion: _apiVersion, kind: _kind, ...rest } = patch;
      mergeMaps(found[0].doc, rest, '');
    }
  }
  if (kustomization.namespace)
    for (const { doc } of objects) if (!CLUSTER_SCOPED.has(doc.kind)) (doc.metadata ??= {}).namespace = kustomization.namespace;
  if (kustomization.images) for (const { doc } of objects) setImages(doc, kustomization.images);
  return objects;
}

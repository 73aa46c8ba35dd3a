/**
 * Tenant scope by type: every exported repository method (services/<service>/src/repositories)
 * that runs statements (its first parameter is the database) takes the application or customer
 * id, an object carrying one (a row to insert), or a branded reference (a `Brand<…>` that only the
 * service's tenant-scoped reads produce), so that no statement can be reached with an id that
 * was not looked up within the tenant. A method that cannot is allow-listed here with its reason.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;

/** `<service>/<file>:<method>` → why it takes neither a tenant id nor a branded reference. */
const ALLOWED: Record<string, string> = {
  'conversation/files.repository.ts:findById': 'A signed download link names the file; the signature, checked first, is the authority.',
  'conversation/import.repository.ts:*': 'Rows of one customer dump import, each row carrying its application id.',
  'identity/customers.repository.ts:*': 'Customers are the top tenant: their own id is the scope.',
  'identity/imports.repository.ts:*': 'A dump import is a customer-level job named by its import id, which only the customer’s own request created.',
  'identity/applications.repository.ts:listAll': 'The operator CLI lists every customer’s applications.',
  'identity/sessions.repository.ts:find': 'An access token names its session; the token’s signature, checked first, is the authority.',
  'identity/sessions.repository.ts:revoke': 'Revoking the session of a verified access token (as find).',
  'identity/stored-secrets.repository.ts:*': 'Encrypting the secrets stored before encryption covers every customer and application alike.',
  'identity/batch.repository.ts:forget': 'A batch job names its record by the job id that the application’s request created.',
  'identity/batch.repository.ts:start': 'As forget: the worker’s own job id.',
  'identity/batch.repository.ts:lock': 'As forget; the record it returns carries the application.',
  'identity/batch.repository.ts:complete': 'As forget: the worker’s own job id.',
  'identity/batch.repository.ts:fail': 'As forget: the worker’s own job id.',
  'identity/batch.repository.ts:unfinished': 'The recovery scan over all applications: it re-queues jobs by id.',
  'identity/batch.repository.ts:prune': 'Retention applies to every application alike.',
  'webhooks/deliveries.repository.ts:recordAttempt': 'The worker names a delivery its own job claimed (claimAttempt, tenant-scoped) by id and job.',
  'webhooks/deliveries.repository.ts:due': 'The recovery scan over all applications: it only re-queues due deliveries by id.',
  'webhooks/deliveries.repository.ts:pruneBefore': 'Retention applies to every application alike.',
  'mail/mails.repository.ts:findByLinkToken': 'A mail’s unsubscribe or redirect link names it by a random token; the token is the credential.',
  'mail/mails.repository.ts:due': 'The recovery scan over all applications: it only re-queues due mails by id.',
};

const TENANT_PARAMETER = /^(applicationId|customerId|applicationIds|customerIds)$/;

function repositoryFiles(): string[] {
  const services = join(ROOT, 'services');
  return readdirSync(services).flatMap((service) => {
    const dir = join(services, service, 'src', 'repositories');
    try {
      return readdirSync(dir)
        .filter((file) => file.endsWith('.ts'))
        .map((file) => join(dir, file));
    } catch {
      return [];
    }
  });
}

/** True when the type is, or holds (array items, object properties, union members), a branded string. */
function holdsBrand(checker: ts.TypeChecker, type: ts.Type, depth = 0): boolean {
  if (depth > 3) return false;
  if (type.getProperty('__brand')) return true;
  if (type.isUnionOrIntersection()) return type.types.some((member) => holdsBrand(checker, member, depth + 1));
  const element = checker.getIndexTypeOfType(type, ts.IndexKind.Number);
  if (element && holdsBrand(checker, element, depth + 1)) return true;
  if (type.flags & ts.TypeFlags.Object && !element)
    return type.getProperties().some((property) => {
      const declaration = property.valueDeclaration ?? property.declarations?.[0];
      return declaration ? holdsBrand(checker, checker.getTypeOfSymbolAtLocation(property, declaration), depth + 1) : false;
    });
  return false;
}

interface Method {
  key: string;
  node: ts.SignatureDeclaration;
}

/** The methods of the exported repository objects and the exported functions of one file. */
function exportedMethods(source: ts.SourceFile, label: string): Method[] {
  const methods: Method[] = [];
  const exported = (node: ts.Node) => ts.canHaveModifiers(node) && ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && exported(statement) && statement.name) methods.push({ key: `${label}:${statement.name.text}`, node: statement });
    if (!ts.isVariableStatement(statement) || !exported(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      const init = declaration.initializer;
      if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) && ts.isIdentifier(declaration.name))
        methods.push({ key: `${label}:${declaration.name.text}`, node: init });
      if (!init || !ts.isObjectLiteralExpression(init)) continue;
      for (const property of init.properties) {
        const name = property.name && (ts.isIdentifier(property.name) || ts.isStringLiteral(property.name)) ? property.name.text : null;
        if (!name) continue;
        if (ts.isMethodDeclaration(property)) methods.push({ key: `${label}:${name}`, node: property });
        else if (ts.isPropertyAssignment(property) && (ts.isArrowFunction(property.initializer) || ts.isFunctionExpression(property.initializer)))
          methods.push({ key: `${label}:${name}`, node: property.initializer });
      }
    }
  }
  return methods;
}

describe('tenant scope of the repositories', () => {
  it('every exported repository method takes the application or customer id, or a branded reference', () => {
    const files = repositoryFiles();
    const program = ts.createProgram(files, {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
    });
    const checker = program.getTypeChecker();
    const unscoped: string[] = [];
    let checked = 0;
    for (const file of files) {
      const source = program.getSourceFile(file)!;
      const label = file.slice(join(ROOT, 'services').length + 1).replace('/src/repositories/', '/');
      for (const { key, node } of exportedMethods(source, label)) {
        checked += 1;
        if (ALLOWED[key] || ALLOWED[`${label}:*`]) continue;
        // Only what runs statements (takes the database first); SQL text builders take no tenant.
        const first = node.parameters[0]?.name;
        if (!first || !ts.isIdentifier(first) || !/^(db|tx)$/.test(first.text)) continue;
        const scoped = node.parameters.some(
          (parameter) =>
            (ts.isIdentifier(parameter.name) && TENANT_PARAMETER.test(parameter.name.text)) ||
            // An object that carries its tenant (a row to insert).
            checker.getTypeAtLocation(parameter).getProperties().some((property) => TENANT_PARAMETER.test(property.name)) ||
            holdsBrand(checker, checker.getTypeAtLocation(parameter)),
        );
        if (!scoped) unscoped.push(key);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(unscoped).toEqual([]);
  });

  it('keeps no allow-list entry for a method that no longer exists', () => {
    const files = repositoryFiles();
    const program = ts.createProgram(files, { noEmit: true, noResolve: true });
    const keys = new Set<string>();
    for (const file of files) {
      const label = file.slice(join(ROOT, 'services').length + 1).replace('/src/repositories/', '/');
      keys.add(`${label}:*`);
      for (const { key } of exportedMethods(program.getSourceFile(file)!, label)) keys.add(key);
    }
    expect(Object.keys(ALLOWED).filter((key) => !keys.has(key))).toEqual([]);
  });
});

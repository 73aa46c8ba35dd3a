/**
 * The API reference: the OpenAPI 3.1 document generated from the route table (committed as
 * docs/openapi.json, one operation per route, valid OpenAPI 3.1 whose schemas are the request
 * and response schemas of the route table), and the gateway serving it at /v1/openapi.json with a Swagger UI page at /docs whose
 * every asset comes from the gateway itself.
 */
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import {
  buildOpenApiDocument,
  createLogger,
  MessageContentSchema,
  openApiPath,
  ROUTES,
  serializeOpenApiDocument,
  type OpenApiDocument,
  Schema,
  type RouteDef,
  type ServiceName,
  type SuccessStatus,
  VIEW_COMPONENTS,
} from '@collab/shared';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayApp, type Forward } from '../../services/gateway/src/app.js';

const COMMITTED_PATH = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** `METHOD /path/{param}` of every route. */
function routeKeys(routes: readonly RouteDef[]): string[] {
  return routes.map((route) => `${route.method} ${openApiPath(route.path)}`).sort();
}

/** `METHOD /path/{param}` of every operation of a document. */
function operationKeys(document: { paths: Record<string, Record<string, unknown>> }): string[] {
  const keys: string[] = [];
  for (const [path, item] of Object.entries(document.paths))
    for (const method of Object.keys(item)) if (HTTP_METHODS.includes(method)) keys.push(`${method.toUpperCase()} ${path}`);
  return keys.sort();
}

type Operation = OpenApiDocument['paths'][string][string];
function operationOf(document: OpenApiDocument, route: RouteDef): Operation {
  const operation = document.paths[openApiPath(route.path)]?.[route.method.toLowerCase()];
  if (!operation) throw new Error(`no operation for ${route.method} ${route.path}`);
  return operation;
}

/** Every `$ref` in a value, with where it is. */
function refsIn(value: unknown, at = '#'): { at: string; ref: string }[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => refsIn(item, `${at}/${index}`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) =>
    key === '$ref' && typeof item === 'string' ? [{ at, ref: item }] : refsIn(item, `${at}/${key}`),
  );
}

function resolvePointer(document: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = document;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** Every Schema Object of a document: components, parameters, bodies and responses. */
function schemasIn(document: OpenApiDocument): { at: string; schema: unknown }[] {
  const found: { at: string; schema: unknown }[] = [];
  for (const [name, schema] of Object.entries(document.components.schemas))
    found.push({ at: `components.schemas.${name}`, schema });
  const contentSchemas = (at: string, holder: unknown) => {
    const content = (holder as { content?: Record<string, { schema?: unknown }> } | undefined)?.content ?? {};
    for (const [type, media] of Object.entries(content)) if (media.schema !== undefined) found.push({ at: `${at} ${type}`, schema: media.schema });
  };
  for (const [name, response] of Object.entries(document.components.responses)) contentSchemas(`components.responses.${name}`, response);
  for (const [path, item] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(item)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const parameter of operation.parameters ?? []) found.push({ at: `${at} parameter ${parameter.name}`, schema: parameter.schema });
      contentSchemas(`${at} requestBody`, operation.requestBody);
      for (const [status, response] of Object.entries(operation.responses)) contentSchemas(`${at} ${status}`, response);
    }
  return found;
}

describe('the OpenAPI document', () => {
  const document = buildOpenApiDocument();

  it('is committed as docs/openapi.json exactly as `npm run openapi` writes it', () => {
    const committed = readFileSync(COMMITTED_PATH, 'utf8');
    // A mismatch means a route or schema changed without regenerating: run `npm run openapi`.
    expect(committed).toBe(serializeOpenApiDocument(document));
    expect(serializeOpenApiDocument(buildOpenApiDocument())).toBe(committed);
  });

  it('has one operation per route of ROUTES and no operation without a route', () => {
    const committed = JSON.parse(readFileSync(COMMITTED_PATH, 'utf8')) as OpenApiDocument;
    const expected = routeKeys(ROUTES);
    expect(new Set(expected).size).toBe(ROUTES.length);
    expect(operationKeys(committed)).toEqual(expected);
    expect(operationKeys(document)).toEqual(expected);
    // The comparison notices a route without an operation and an operation without a route.
    expect(operationKeys(buildOpenApiDocument(ROUTES.slice(1)))).not.toEqual(expected);
    const extra = { ...ROUTES[0], id: 'extra.route', path: '/v1/extra' } as RouteDef;
    expect(operationKeys(buildOpenApiDocument([...ROUTES, extra]))).not.toEqual(expected);
  });

  it('names each operation by its route id, with its summary and tag', () => {
    const operationIds = ROUTES.map((route) => operationOf(document, route).operationId);
    expect(operationIds).toEqual(ROUTES.map((route) => route.id));
    expect(new Set(operationIds).size).toBe(operationIds.length);
    for (const route of ROUTES) {
      const operation = operationOf(document, route);
      expect(operation.summary).toBe(route.summary);
      expect(operation.tags).toEqual([route.tag]);
    }
    expect(document.tags.map((tag) => tag.name).sort()).toEqual([...new Set(ROUTES.map((route) => route.tag))].sort());
  });

  it('is valid OpenAPI 3.1 according to @seriousme/openapi-schema-validator', async () => {
    expect(document.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document) as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('would be rejected by the validator when it is not valid', async () => {
    const misplaced = structuredClone(document) as unknown as { paths: Record<string, Record<string, { parameters: { in: string }[] }>> };
    misplaced.paths['/v1/users'].get.parameters[0].in = 'body';
    expect((await new Validator().validate(misplaced)).valid).toBe(false);
    const dangling = structuredClone(document) as unknown as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    dangling.paths['/v1/users'].get.responses['404'] = { $ref: '#/components/responses/Missing' };
    expect((await new Validator().validate(dangling)).valid).toBe(false);
  });

  it('resolves every $ref inside the document', () => {
    const refs = refsIn(document);
    expect(refs.map(({ ref }) => ref)).toContain('#/components/schemas/MessageNode');
    expect(refs.map(({ ref }) => ref)).toContain('#/components/schemas/ErrorResponse');
    const dangling = refs.filter(({ ref }) => resolvePointer(document, ref) === undefined);
    expect(dangling).toEqual([]);
    expect(refsIn({ a: { $ref: '#/components/schemas/Nope' } }).filter(({ ref }) => resolvePointer(document, ref) === undefined)).toHaveLength(1);
  });

  it('has Schema Objects that are valid JSON Schema 2020-12', () => {
    const ajv = new Ajv2020({ strict: false });
    const schemas = schemasIn(document);
    expect(schemas.length).toBeGreaterThan(ROUTES.length);
    const invalid = schemas
      .filter(({ schema }) => !ajv.validateSchema(schema as object))
      .map(({ at }) => `${at}: ${ajv.errorsText(ajv.errors)}`);
    expect(invalid).toEqual([]);
    expect(ajv.validateSchema({ type: 'objekt' })).toBe(false);
  });

  it('describes request bodies and query parameters with the schemas that validate them', () => {
    for (const route of ROUTES) {
      const operation = operationOf(document, route);
      if (route.body && route.bodyType === 'form') {
        // The fields read, other fields of the form ignored.
        const schema = { ...route.body.jsonSchema(), additionalProperties: true };
        expect(operation.requestBody, route.id).toEqual({
          required: true,
          content: { 'multipart/form-data': { schema }, 'application/x-www-form-urlencoded': { schema } },
        });
      } else if (route.body)
        expect(operation.requestBody, route.id).toEqual({
          required: true,
          content: { 'application/json': { schema: route.body.jsonSchema() } },
        });
      else if (route.bodyType === undefined) expect(operation.requestBody, route.id).toBeUndefined();
      const query = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query');
      expect(query.map((parameter) => parameter.name), route.id).toEqual(Object.keys(route.query?.shape ?? {}));
      for (const parameter of query) {
        const param = route.query!.shape[parameter.name as string];
        expect(parameter.schema, `${route.id} ${parameter.name}`).toEqual(param.jsonSchema());
        expect(parameter.required).toBe(false);
        expect(parameter.description).toBe(param.description || undefined);
      }
    }
    expect(document.components.schemas.MessageNode).toEqual(MessageContentSchema.nodeJsonSchema());
    const createMessage = operationOf(document, ROUTES.find((route) => route.id === 'messages.create')!);
    const body = (createMessage.requestBody as { content: Record<string, { schema: { properties: Record<string, unknown> } }> }).content[
      'application/json'
    ].schema;
    expect(body.properties.content).toEqual({ type: 'array', items: { $ref: '#/components/schemas/MessageNode' } });
  });

  it('documents every success answer of every route with the schema of its body', () => {
    let jsonAnswers = 0;
    for (const route of ROUTES) {
      const { responses } = operationOf(document, route);
      const success = Object.keys(responses).filter((status) => /^2\d\d$/.test(status));
      expect(success.length, route.id).toBeGreaterThan(0);
      expect(success, route.id).toEqual(Object.keys(route.response));
      for (const status of success) {
        const answer = route.response[Number(status) as SuccessStatus]!;
        const content = (responses[status] as { description?: string; content?: Record<string, { schema?: unknown }> }).content ?? {};
        expect((responses[status] as { description?: string }).description, `${route.id} ${status}`).toBeTruthy();
        const media = Object.entries(content);
        expect(media, `${route.id} ${status}`).toHaveLength(1);
        const [type, { schema }] = media[0];
        expect(schema, `${route.id} ${status}`).toBeDefined();
        if (answer instanceof Schema) {
          jsonAnswers++;
          expect(type, route.id).toBe('application/json');
          expect(schema, `${route.id} ${status}`).toEqual(answer.jsonSchema());
          // A schema that accepts anything documents nothing.
          expect(schema, `${route.id} ${status}`).not.toEqual({});
        } else expect(type, route.id).not.toBe('application/json');
      }
    }
    // All but the dump and the pages of a mail's links (redirect, unsubscribe GET and POST) answer JSON.
    expect(jsonAnswers).toBe(ROUTES.length - 4);
  });

  it('documents the objects several answers share once, as named components', () => {
    const names = VIEW_COMPONENTS.map((view) => view.name);
    expect(new Set(names).size).toBe(names.length);
    for (const view of VIEW_COMPONENTS) expect(document.components.schemas[view.name!]).toEqual(view.definitionJsonSchema());
    const answer = (id: string) =>
      (operationOf(document, ROUTES.find((route) => route.id === id)!).responses['200'] as { content: Record<string, { schema: unknown }> }).content[
        'application/json'
      ].schema;
    expect(answer('messages.get')).toEqual({ $ref: '#/components/schemas/Message' });
    expect(answer('messages.list')).toMatchObject({ properties: { messages: { items: { $ref: '#/components/schemas/Message' } } } });
    const message = document.components.schemas.Message as { properties: Record<string, unknown>; required: string[] };
    expect(message.properties.content).toEqual({ type: 'array', items: { $ref: '#/components/schemas/MessageNode' } });
    expect(message.required).toEqual(expect.arrayContaining(['id', 'authorID', 'threadID', 'content', 'attachments', 'reactions']));
  });

  it('describes the customer dump an import takes, raw or as multipart', () => {
    const imports = ROUTES.filter((route) => route.bodyType === 'dump');
    expect(imports.map((route) => route.id)).toEqual(['imports.create']);
    const requestBody = operationOf(document, imports[0]).requestBody as { content: Record<string, { schema: { required?: string[] } }> };
    expect(Object.keys(requestBody.content)).toEqual(['text/plain', 'application/octet-stream', 'multipart/form-data']);
    expect(requestBody.content['multipart/form-data'].schema.required).toEqual(['dump']);
  });

  it('describes the multipart upload', () => {
    const upload = ROUTES.filter((route) => route.bodyType === 'multipart');
    expect(upload.length).toBeGreaterThan(0);
    for (const route of upload) {
      const requestBody = operationOf(document, route).requestBody as { content: Record<string, { schema: { properties: object; required: string[] } }> };
      expect(Object.keys(requestBody.content)).toEqual(['multipart/form-data']);
      const schema = requestBody.content['multipart/form-data'].schema;
      expect(Object.keys(schema.properties)).toEqual(['file', 'ownerID', 'name']);
      expect(schema.required).toEqual(['file', 'ownerID']);
    }
  });

  it('declares every path parameter, required, with the format of its route', () => {
    for (const route of ROUTES) {
      const operation = operationOf(document, route);
      const templated = [...openApiPath(route.path).matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      const declared = (operation.parameters ?? []).filter((parameter) => parameter.in === 'path');
      expect(declared.map((parameter) => parameter.name), route.id).toEqual(templated);
      for (const parameter of declared) {
        expect(parameter.required).toBe(true);
        const format = route.params?.[parameter.name as string]?.format ?? 'any';
        const schema = parameter.schema as Record<string, unknown>;
        if (format === 'uuid') expect(schema).toEqual({ type: 'string', format: 'uuid' });
        if (format === 'identifier') expect(schema).toMatchObject({ type: 'string', minLength: 1, maxLength: 320 });
        if (format === 'identifier-or-server-id') expect(schema.anyOf).toHaveLength(2);
        if (format === 'any') expect(schema).toEqual({ type: 'string' });
      }
    }
    expect(openApiPath('/v1/threads/:threadID/messages/:messageID')).toBe('/v1/threads/{threadID}/messages/{messageID}');
  });

  it('asks for the token each route takes', () => {
    const { inboundMail, ...tokens } = document.components.securitySchemes;
    expect(Object.keys(tokens).sort()).toEqual(['clientToken', 'customerToken', 'serverToken']);
    for (const scheme of Object.values(tokens)) expect(scheme).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(inboundMail).toMatchObject({ type: 'http', scheme: 'basic' });
    const expected = { app: [{ serverToken: [] }], customer: [{ customerToken: [] }], client: [{ clientToken: [] }], inbound: [{ inboundMail: [] }], none: [] };
    for (const route of ROUTES) expect(operationOf(document, route).security, route.id).toEqual(expected[route.auth]);
    expect(new Set(ROUTES.map((route) => route.auth))).toEqual(new Set(['app', 'customer', 'client', 'inbound', 'none']));
  });

  it('answers errors with the shared ErrorResponse', () => {
    expect(document.components.schemas.ErrorResponse).toMatchObject({
      type: 'object',
      required: ['error', 'message'],
      properties: { error: { type: 'string' }, message: { type: 'string' } },
    });
    for (const route of ROUTES) {
      const { responses } = operationOf(document, route);
      expect(responses.default).toEqual({ $ref: '#/components/responses/Error' });
      if (route.auth !== 'none') expect(responses['401']).toEqual({ $ref: '#/components/responses/Unauthorized' });
      if (route.body || route.params || route.query) expect(responses['400']).toEqual({ $ref: '#/components/responses/BadRequest' });
      if (route.path.includes(':')) expect(responses['404']).toEqual({ $ref: '#/components/responses/NotFound' });
    }
    for (const name of ['BadRequest', 'Unauthorized', 'NotFound', 'Error'])
      expect(document.components.responses[name]).toMatchObject({
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } },
      });
  });
});

describe('the gateway serves the reference', () => {
  let server: http.Server;
  let baseUrl: string;

  beforeAll(async () => {
    const refuse: Forward = (_req, _res, next) => next(new Error('the reference must not be proxied'));
    const proxies: Record<ServiceName, Forward> = { identity: refuse, conversation: refuse, notification: refuse, webhooks: refuse, mail: refuse };
    const app = createGatewayApp({
      logger: createLogger('test', 'silent'),
      internalToken: 'internal',
      authenticate: async () => {
        throw new Error('the reference must not ask for a token');
      },
      proxies,
      readiness: [],
      isDraining: () => false,
    });
    server = http.createServer(app);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it('GET /v1/openapi.json answers the generated document without a token', async () => {
    const response = await fetch(`${baseUrl}/v1/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual(buildOpenApiDocument());
  });

  it('GET /docs answers a Swagger UI page that loads every asset from the gateway', async () => {
    const response = await fetch(`${baseUrl}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await response.text();
    expect(page).toContain('<div id="swagger-ui">');
    // Nothing from another origin: the page renders offline.
    expect(page).not.toMatch(/(?:src|href)="(?:[a-z]+:)?\/\//i);
    expect(response.headers.get('content-security-policy')).toMatch(/script-src 'self'/);

    const assets = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(assets).toEqual(expect.arrayContaining(['/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js', '/docs/swagger-initializer.js']));
    const contentTypes: Record<string, RegExp> = {
      css: /^text\/css/,
      js: /^(?:text|application)\/javascript/,
      png: /^image\/png/,
    };
    for (const asset of assets) {
      expect(asset, asset).toMatch(/^\/docs\/[\w.-]+\.(?:css|js|png)$/);
      const answer = await fetch(`${baseUrl}${asset}`);
      expect(answer.status, asset).toBe(200);
      expect(answer.headers.get('content-type'), asset).toMatch(contentTypes[asset.split('.').pop()!]);
      const bytes = Buffer.from(await answer.arrayBuffer());
      expect(bytes.length, asset).toBeGreaterThan(0);
      if (asset.endsWith('.css'))
        // Whatever the stylesheet loads is inline.
        for (const [, url] of bytes.toString('utf8').matchAll(/url\(\s*["']?([^"')]+)/g)) expect(url, asset).toMatch(/^data:/);
    }

    const initializer = await (await fetch(`${baseUrl}/docs/swagger-initializer.js`)).text();
    expect(initializer).toContain("url: '/v1/openapi.json'");
    expect(initializer).toContain('validatorUrl: null');
  });

  it('serves swagger-ui-dist files as the package ships them', async () => {
    const bundle = await (await fetch(`${baseUrl}/docs/swagger-ui-bundle.js`)).text();
    const shipped = readFileSync(createRequire(import.meta.url).resolve('swagger-ui-dist/swagger-ui-bundle.js'), 'utf8');
    expect(bundle).toBe(shipped);
  });

  it('serves nothing else under /docs', async () => {
    for (const path of ['/docs/package.json', '/docs/index.html', '/docs/swagger-ui-bundle.js.map', '/docs/..%2Fpackage.json']) {
      const response = await fetch(`${baseUrl}${path}`);
      expect(response.status, path).toBe(404);
      expect(await response.json()).toMatchObject({ error: 'not_found' });
    }
  });
});

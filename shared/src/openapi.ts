/**
 * The OpenAPI 3.1 document of the public API, generated from the route table: the same request
 * schemas that validate requests describe them here, and each route's response schemas describe
 * its success answers (their `.jsonSchema()` is JSON Schema 2020-12, the dialect of OpenAPI 3.1). The gateway serves it at `GET /v1/openapi.json`, and
 * `npm run openapi` writes it to docs/openapi.json, so its output must be deterministic: objects
 * are built in a fixed key order from the route table's order, with nothing taken from the clock
 * or the environment.
 */
import { ERROR_CATALOG, type ErrorCode } from './errors.js';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENT_REPLAYED_HEADER } from './http/idempotency.js';
import { MessageContentSchema } from './routes/message-content.js';
import { ROUTES, VIEW_COMPONENTS } from './routes/index.js';
import type { AuthKind, PathParam, PathParamFormat, RawAnswer, RouteDef, SuccessStatus } from './routes/route.js';
import { s, Schema, type JsonSchema } from './schema/index.js';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_EVENTS, webhookBodySchema } from './webhooks/events.js';

/** Version of the API document; change it when the public contract changes. */
export const OPENAPI_DOCUMENT_VERSION = '1.0.0';
export const OPENAPI_TITLE = 'collab-backend management REST API';

export type OpenApiDocument = {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string }[];
  tags: { name: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  /** The requests this server sends to receivers, one per event type (the webhook event catalogue). */
  webhooks: Record<string, { post: JsonSchema }>;
  components: {
    securitySchemes: Record<string, JsonSchema>;
    schemas: Record<string, JsonSchema>;
    responses: Record<string, JsonSchema>;
  };
};

export type OpenApiOperation = {
  operationId: string;
  summary: string;
  tags: string[];
  security: Record<string, string[]>[];
  parameters?: JsonSchema[];
  requestBody?: JsonSchema;
  responses: Record<string, JsonSchema>;
};

const SECURITY: Record<AuthKind, Record<string, string[]>[]> = {
  app: [{ serverToken: [] }],
  customer: [{ customerToken: [] }],
  client: [{ clientToken: [] }],
  inbound: [{ inboundMail: [] }],
  none: [],
};

const SERVER_GENERATED_ID = '^cord:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** The JSON Schema of a path parameter's format, from the same builders as body fields. */
function pathParamSchema(format: PathParamFormat): JsonSchema {
  switch (format) {
    case 'identifier':
      return s.identifier().jsonSchema();
    case 'identifier-or-server-id':
      return { anyOf: [s.identifier().jsonSchema(), { type: 'string', pattern: SERVER_GENERATED_ID }] };
    case 'uuid':
      return s.uuid().jsonSchema();
    case 'any':
      return { type: 'string' };
  }
}

const PATH_PARAM_DESCRIPTIONS: Record<PathParamFormat, string> = {
  identifier: 'An identifier chosen by the application: 1 to 320 characters, not starting with `cord:`.',
  'identifier-or-server-id': 'An identifier chosen by the application, or `cord:<uuid>` for an object the server created.',
  uuid: 'A UUID.',
  any: 'A string.',
};

/** `/v1/users/:userID` → `/v1/users/{userID}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function pathParamNames(expressPath: string): string[] {
  return [...expressPath.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1]);
}

function pathParameter(name: string, rule: PathParam | undefined): JsonSchema {
  const format = rule?.format ?? 'any';
  return {
    name,
    in: 'path',
    required: true,
    description: PATH_PARAM_DESCRIPTIONS[format],
    schema: pathParamSchema(format),
  };
}

function parametersOf(route: RouteDef): JsonSchema[] {
  const parameters = pathParamNames(route.path).map((name) => pathParameter(name, route.params?.[name]));
  for (const [name, param] of Object.entries(route.query?.shape ?? {})) {
    const parameter: JsonSchema = { name, in: 'query', required: false };
    if (param.description) parameter.description = param.description;
    parameter.schema = param.jsonSchema();
    parameters.push(parameter);
  }
  if (route.idempotent) parameters.push(IDEMPOTENCY_KEY_PARAMETER);
  return parameters;
}

const IDEMPOTENCY_KEY_PARAMETER: JsonSchema = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  required: false,
  description:
    `Makes a retry safe: the first request with a key runs and its answer is kept (per application, or customer for applications) ` +
    `for IDEMPOTENCY_TTL_HOURS (24 by default). A repeat with the same key and body gets that answer again, with ` +
    `\`${IDEMPOTENT_REPLAYED_HEADER}: true\`, and writes nothing; the same key with another body or path answers 422 ` +
    `\`idempotency_key_reused\`; a repeat while the first still runs answers 409 \`idempotency_key_in_use\` with ` +
    `\`Retry-After: 1\`. A 5xx answer is not kept (a retry runs again); a 4xx is.`,
  schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, pattern: '^[\\x20-\\x7E]+$' },
};

const MULTIPART_UPLOAD: JsonSchema = {
  type: 'object',
  properties: {
    file: { type: 'string', format: 'binary', contentMediaType: 'application/octet-stream', description: 'The file.' },
    ownerID: { type: 'string', description: 'The user who owns the file (only they can attach it).' },
    name: { type: 'string', description: 'File name; defaults to the uploaded file name.' },
  },
  required: ['file', 'ownerID'],
};

const DUMP: JsonSchema = { type: 'string', format: 'binary', description: 'The dump: a psql script of COPY blocks ending with COMMIT;.' };

function requestBodyOf(route: RouteDef): JsonSchema | undefined {
  if (route.bodyType === 'form') {
    // The fields read; a parser's other fields are ignored.
    const schema = { ...route.body!.jsonSchema(), additionalProperties: true };
    return { required: true, content: { 'multipart/form-data': { schema }, 'application/x-www-form-urlencoded': { schema } } };
  }
  if (route.bodyType === 'multipart')
    return { required: true, content: { 'multipart/form-data': { schema: MULTIPART_UPLOAD } } };
  if (route.bodyType === 'dump')
    return {
      required: true,
      content: {
        'text/plain': { schema: DUMP },
        'application/octet-stream': { schema: DUMP },
        'multipart/form-data': { schema: { type: 'object', properties: { dump: DUMP }, required: ['dump'] } },
      },
    };
  if (route.body)
    return { required: true, content: { 'application/json': { schema: route.body.jsonSchema() } } };
  return undefined;
}

const SUCCESS_WORDS: Record<SuccessStatus, string> = {
  200: 'Success.',
  201: 'Created.',
  202: 'Accepted: the work goes on in the background.',
};

/** The route's success answers, each with the schema of its body. */
function successResponsesOf(route: RouteDef): Record<string, JsonSchema> {
  const responses: Record<string, JsonSchema> = {};
  for (const [status, answer] of Object.entries(route.response) as [`${SuccessStatus}`, Schema<unknown> | RawAnswer][])
    responses[status] =
      answer instanceof Schema
        ? { description: SUCCESS_WORDS[Number(status) as SuccessStatus], content: { 'application/json': { schema: answer.jsonSchema() } } }
        : { description: answer.description, content: { [answer.mediaType]: { schema: answer.schema } } };
  return responses;
}

const ERROR_RESPONSES = {
  BadRequest: 400,
  Unauthorized: 401,
  NotFound: 404,
} as const;

function errorCodesWithStatus(status: number): ErrorCode[] {
  return (Object.keys(ERROR_CATALOG) as ErrorCode[]).filter((code) => ERROR_CATALOG[code].status === status);
}

function responseRef(name: keyof typeof ERROR_RESPONSES | 'Error' | 'IdempotencyKeyInUse' | 'IdempotencyKeyReused'): JsonSchema {
  return { $ref: `#/components/responses/${name}` };
}

function responsesOf(route: RouteDef): Record<string, JsonSchema> {
  const responses = successResponsesOf(route);
  const hasInput = Boolean(route.params || route.query || route.body || route.bodyType);
  if (hasInput) responses['400'] = responseRef('BadRequest');
  if (route.auth !== 'none') responses['401'] = responseRef('Unauthorized');
  if (pathParamNames(route.path).length > 0) responses['404'] = responseRef('NotFound');
  if (route.idempotent) {
    responses['409'] = responseRef('IdempotencyKeyInUse');
    responses['422'] = responseRef('IdempotencyKeyReused');
  }
  responses.default = responseRef('Error');
  return responses;
}

function operationOf(route: RouteDef): OpenApiOperation {
  const parameters = parametersOf(route);
  const requestBody = requestBodyOf(route);
  // Keys in reading order: what it is, what it takes, what it answers.
  return {
    operationId: route.id,
    summary: route.summary,
    tags: [route.tag],
    security: SECURITY[route.auth],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: responsesOf(route),
  };
}

/** Each event type as the signed POST a receiver gets; the receiver answers 2xx to acknowledge it. */
function webhooks(): OpenApiDocument['webhooks'] {
  return Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `webhook.${type}`,
          summary: WEBHOOK_EVENTS[type].description,
          tags: ['Webhooks'],
          parameters: [
            { name: 'X-Cord-Timestamp', in: 'header', required: true, schema: { type: 'string' }, description: 'Milliseconds since the epoch.' },
            {
              name: 'X-Cord-Signature',
              in: 'header',
              required: true,
              schema: { type: 'string' },
              description: 'base64(HMAC-SHA256(application secret, `<timestamp>:<body>`)).',
            },
          ],
          requestBody: { required: true, content: { 'application/json': { schema: webhookBodySchema(type).jsonSchema() } } },
          responses: { '200': { description: 'Received; any other answer is retried (url-verification must answer 200).' } },
        },
      },
    ]),
  );
}

function components(): OpenApiDocument['components'] {
  const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } };
  const responses: Record<string, JsonSchema> = {};
  for (const [name, status] of Object.entries(ERROR_RESPONSES))
    responses[name] = {
      description: `Error codes: ${errorCodesWithStatus(status).join(', ')}.`,
      content: errorContent,
    };
  responses.IdempotencyKeyInUse = {
    description: `idempotency_key_in_use: a request with this ${IDEMPOTENCY_KEY_HEADER} is still running; retry after \`Retry-After\` seconds. Other conflicts of the route answer 409 too.`,
    headers: { 'Retry-After': { schema: { type: 'integer' } } },
    content: errorContent,
  };
  responses.IdempotencyKeyReused = {
    description: `idempotency_key_reused: this ${IDEMPOTENCY_KEY_HEADER} was used for a request with another body or path.`,
    content: errorContent,
  };
  responses.Error = {
    description: 'Any other error (for example 409, 413, 429 or 5xx); the status follows the error code.',
    content: errorContent,
  };
  return {
    securitySchemes: {
      serverToken: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description:
          'A server token (HS512, `{app_id}`, signed with the application secret) or an access token from `POST /v1/authorize`.',
      },
      customerToken: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'An application-management token (HS512, `{customer_id}`, signed with the customer secret).',
      },
      clientToken: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description:
          'A client token (HS256 or HS512, `{project_id, user_id, group_id?, user_details?, group_details?}`, signed with the application secret): reads as that user, within their groups. Refused: `403 invalid_session`.',
      },
      inboundMail: {
        type: 'http',
        scheme: 'basic',
        description: "The inbound-mail parser's credentials (INBOUND_EMAIL_USERNAME and INBOUND_EMAIL_PASSWORD); with none set the route answers 404.",
      },
    },
    schemas: {
      ErrorResponse: {
        type: 'object',
        properties: {
          error: { type: 'string', enum: Object.keys(ERROR_CATALOG) },
          message: { type: 'string' },
        },
        required: ['error', 'message'],
      },
      MessageNode: MessageContentSchema.nodeJsonSchema(),
      ...Object.fromEntries(VIEW_COMPONENTS.map((view) => [view.name!, view.definitionJsonSchema()])),
    },
    responses,
  };
}

/** The OpenAPI 3.1 document of `routes`, in their order. */
export function buildOpenApiDocument(routes: readonly RouteDef[] = ROUTES): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  const tags: string[] = [];
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operationOf(route);
    if (!tags.includes(route.tag)) tags.push(route.tag);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: OPENAPI_TITLE,
      version: OPENAPI_DOCUMENT_VERSION,
      description:
        'Server-to-server API to sync users and groups, read and write threads and messages, send notifications and manage applications. Generated from the route table whose schemas validate requests.',
    },
    servers: [{ url: '/', description: 'This gateway' }],
    tags: tags.map((name) => ({ name })),
    paths,
    webhooks: webhooks(),
    components: components(),
  };
}

/** The document as committed in docs/openapi.json and served by the gateway. */
export function serializeOpenApiDocument(document: OpenApiDocument = buildOpenApiDocument()): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

/**
 * Checks the answers the tests receive against the response schemas of the route table, as the
 * OpenAPI document publishes them: a 2xx JSON answer of a public route whose body the document
 * does not describe (a missing or extra key, a wrong type, a status the route does not document)
 * throws, so the test that received it fails at the call. Answers of other paths (internal
 * routes, probes) and error answers are not checked here.
 */
import { buildOpenApiDocument, isEmail, isJwtShaped, isUri, isUuid, openApiPath, parseDateTime, RouteMatcher, ROUTES, type RouteDef } from '@collab/shared';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

declare module 'vitest' {
  interface TaskMeta {
    /** Answers of the test checked against their route's response schema. */
    checkedAnswers?: number;
  }
}

export interface ReceivedAnswer {
  method: string;
  /** The path the request named, with its query string. */
  path: string;
  status: number;
  contentType: string | null;
  body: unknown;
}

export class ResponseSchemaMismatch extends Error {
  override name = 'ResponseSchemaMismatch';
}

const DOCUMENT_ID = 'openapi';

/** Compiles the document once: each route's schema is found by its JSON pointer in it. */
function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  // The formats of the route table's schemas, checked by the same functions that validate requests.
  ajv.addFormat('date-time', (value: string) => parseDateTime(value) !== null);
  ajv.addFormat('uri', isUri);
  ajv.addFormat('email', isEmail);
  ajv.addFormat('uuid', isUuid);
  ajv.addFormat('jwt', isJwtShaped);
  ajv.addFormat('binary', true);
  ajv.addSchema(buildOpenApiDocument() as unknown as object, DOCUMENT_ID);
  return ajv;
}

const escapePointer = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

export class ResponseChecker {
  private readonly ajv = createAjv();
  private readonly matcher: RouteMatcher<RouteDef>;
  private readonly validators = new Map<string, ValidateFunction | null>();
  private checked = 0;

  constructor(routes: readonly RouteDef[] = ROUTES) {
    this.matcher = new RouteMatcher(routes);
  }

  /** How many answers were checked so far. */
  get count(): number {
    return this.checked;
  }

  /** Throws a ResponseSchemaMismatch when a 2xx JSON answer of a public route is not what its route documents. */
  check(answer: ReceivedAnswer): void {
    if (answer.status < 200 || answer.status > 299 || answer.method.toUpperCase() === 'HEAD') return;
    if (!/^application\/json\b/i.test(answer.contentType ?? '') || answer.body === undefined) return;
    const lookup = this.matcher.lookup(answer.method, new URL(answer.path, 'http://answer.invalid').pathname);
    if (lookup.kind !== 'match') return;
    const { route } = lookup.match;
    const where = `${answer.method.toUpperCase()} ${answer.path} (${route.id}) answered ${answer.status}`;
    const validate = this.validatorOf(route, answer.status);
    if (!validate) throw new ResponseSchemaMismatch(`${where} with JSON, which its route does not document for that status.`);
    this.checked++;
    if (!validate(answer.body)) {
      const excerpt = JSON.stringify(answer.body).slice(0, 2000);
      throw new ResponseSchemaMismatch(
        `${where} with a body outside its route's response schema: ${this.ajv.errorsText(validate.errors, { dataVar: 'body' })}\nbody: ${excerpt}`,
      );
    }
  }

  private validatorOf(route: RouteDef, status: number): ValidateFunction | null {
    const key = `${route.id} ${status}`;
    if (!this.validators.has(key)) {
      const pointer = ['paths', openApiPath(route.path), route.method.toLowerCase(), 'responses', String(status), 'content', 'application/json', 'schema']
        .map(escapePointer)
        .join('/');
      this.validators.set(key, (this.ajv.getSchema(`${DOCUMENT_ID}#/${pointer}`) as ValidateFunction | undefined) ?? null);
    }
    return this.validators.get(key)!;
  }
}

/** The checker of every answer of test/support/client.ts. */
export const responseChecker = new ResponseChecker();

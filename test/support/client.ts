/**
 * A small HTTP client for tests: JSON in, status/headers/JSON out. Every 2xx JSON answer of a public
 * route is checked against its route's response schema (response-schemas.ts): a mismatch throws.
 */
import { responseChecker } from './response-schemas.js';
import type { TestSystem } from './system.js';
import { customerToken, serverToken } from './tokens.js';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/**
 * Repeats a request until `done` holds, at most `tries` times, and answers the last response: for
 * effects that arrive asynchronously (a revocation or rotation reaching the gateway by pub/sub).
 */
export async function pollAnswer(probe: () => Promise<ApiResponse>, done: (response: ApiResponse) => boolean, tries = 100): Promise<ApiResponse> {
  let last = await probe();
  for (let attempt = 1; attempt < tries && !done(last); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    last = await probe();
  }
  return last;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  /** Sent as is, instead of JSON-encoding `body`. */
  rawBody?: string;
  headers?: Record<string, string>;
  /**
   * The answer comes from a stand-in the test put in place of a service (to see what the gateway
   * forwards), not from the service: its body is not checked against the route's response schema.
   */
  fromStandIn?: true;
}

export async function request<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  if (!options.fromStandIn)
    responseChecker.check({ method, path, status: response.status, contentType: response.headers.get('content-type'), body: parsed });
  return { status: response.status, headers: response.headers, body: parsed as T };
}

/** Calls as one application (server token) or as the customer. */
export class ApiClient {
  constructor(
    readonly system: TestSystem,
    private readonly token: () => Promise<string | null>,
  ) {}

  async call<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>) {
    return request<T>(this.system.url, method, path, { token: await this.token(), body, headers });
  }
  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.call<T>('GET', path, undefined, headers);
  }
  put<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.call<T>('PUT', path, body, headers);
  }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.call<T>('POST', path, body, headers);
  }
  delete<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.call<T>('DELETE', path, body, headers);
  }
}

export function asCustomer(system: TestSystem): ApiClient {
  return new ApiClient(system, () => customerToken(system.customer.id, system.customer.secret));
}

export interface TestApplication {
  id: string;
  secret: string;
  client: ApiClient;
}

/** Creates an application through the API and returns a client that calls as it. */
export async function createApplication(system: TestSystem, name = 'test app'): Promise<TestApplication> {
  const response = await asCustomer(system).post('/v1/applications', { name });
  if (response.status !== 200) throw new Error(`create application failed: ${JSON.stringify(response.body)}`);
  const { applicationID: id, secret } = response.body;
  return { id, secret, client: new ApiClient(system, () => serverToken(id, secret)) };
}

/** Unique ids per test, so tests never depend on each other's data. */
let counter = 0;
export function uniqueId(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

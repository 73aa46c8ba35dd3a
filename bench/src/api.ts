/**
 * Calling the system as a customer's backend does: HS512 tokens (as @cord-sdk/server signs them),
 * JSON over HTTP; and straight to a service with the internal headers the gateway would set.
 */
import { createHmac } from 'node:crypto';
import { INTERNAL_HEADERS } from '@collab/shared';

export function hs512(claims: Record<string, unknown>, secret: string): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${encode({ alg: 'HS512', typ: 'JWT' })}.${encode({ ...claims, iat: Math.floor(Date.now() / 1000) })}`;
  return `${unsigned}.${createHmac('sha512', secret).update(unsigned).digest('base64url')}`;
}

export interface ApiResponse {
  status: number;
  // Whatever the endpoint answers; callers read the fields they asked for.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export class Api {
  constructor(
    readonly baseUrl: string,
    readonly headers: Record<string, string>,
  ) {}

  async call(method: string, path: string, body?: unknown): Promise<ApiResponse> {
    const headers = { ...this.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  }

  /** A call that must succeed (setting up data): anything but 2xx stops the benchmark. */
  async ok(method: string, path: string, body?: unknown): Promise<ApiResponse> {
    const response = await this.call(method, path, body);
    if (response.status < 200 || response.status > 299)
      throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(response.body)}`);
    return response;
  }
}

export interface Application {
  id: string;
  /** Through the gateway, with a server token. */
  api: Api;
}

export async function createApplication(gatewayUrl: string, customer: { id: string; secret: string }, name: string): Promise<Application> {
  const asCustomer = new Api(gatewayUrl, { authorization: `Bearer ${hs512({ customer_id: customer.id }, customer.secret)}` });
  const { body } = await asCustomer.ok('POST', '/v1/applications', { name });
  const token = hs512({ app_id: body.applicationID }, body.secret);
  return { id: body.applicationID, api: new Api(gatewayUrl, { authorization: `Bearer ${token}` }) };
}

/** Headers of a request the gateway forwards for this application. */
export function internalHeaders(internalToken: string, applicationId: string): Record<string, string> {
  return { [INTERNAL_HEADERS.internalToken]: internalToken, [INTERNAL_HEADERS.applicationId]: applicationId };
}

/** A one-paragraph message body, as clients send. */
export function messageBody(authorID: string, text: string, createThread?: { groupID: string; name: string }) {
  return {
    authorID,
    content: [{ type: 'p', children: [{ text }] }],
    ...(createThread && {
      createThread: { ...createThread, location: { page: createThread.name }, url: `https://example.com/${createThread.name}` },
    }),
  };
}

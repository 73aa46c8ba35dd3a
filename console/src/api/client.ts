/**
 * Calls to the console's API. The types come from docs/openapi.json (src/api/schema.d.ts,
 * generated at build time): a route or field the API drops breaks the console's build.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema';

/** An application as the API answers it. */
export type Application = components['schemas']['Application'];

let csrfToken = '';
export const setCsrfToken = (token: string) => {
  csrfToken = token;
};
export const getCsrfToken = () => csrfToken;

/** Mutations carry the session's CSRF token; the session itself is the HttpOnly cookie. */
const csrf: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET') request.headers.set('X-CSRF-Token', csrfToken);
    return request;
  },
  async onResponse({ response }) {
    if (response.status === 401 && (await sessionEnded(response.clone()))) window.location.reload();
    return response;
  },
};

/** The console's own refusal of a call whose session expired or ended: the page starts over at sign-in. */
async function sessionEnded(response: Response): Promise<boolean> {
  const body = (await response.json().catch(() => null)) as { error?: string } | null;
  return body?.error === 'invalid_authorization_header';
}

/** The API's customer routes (applications, imports), as the signed-in customer. */
export const customerApi = createClient<paths>({ baseUrl: '/console/api/customer' });
customerApi.use(csrf);

const appClients = new Map<string, ReturnType<typeof createClient<paths>>>();
/** The API's application routes, as this application of the signed-in customer. */
export function appApi(applicationId: string) {
  let client = appClients.get(applicationId);
  if (!client) {
    client = createClient<paths>({ baseUrl: `/console/api/apps/${encodeURIComponent(applicationId)}` });
    client.use(csrf);
    appClients.set(applicationId, client);
  }
  return client;
}

export interface ApiErrorBody {
  error: string;
  message: string;
}

/** The message of an API error answer, for the page to show. */
export function errorMessage(error: unknown): string {
  if (error && typeof error === 'object' && 'message' in error) return String((error as ApiErrorBody).message);
  return 'Something went wrong.';
}

/** The console's own calls (sign-in, session, operator), outside the API's document. */
export async function consoleCall<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`/console/api${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...(method === 'GET' ? {} : { 'X-CSRF-Token': csrfToken }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 204) return undefined as T;
  const answer = (await response.json().catch(() => ({ message: response.statusText }))) as unknown;
  if (!response.ok) throw new Error(errorMessage(answer));
  return answer as T;
}

/** The ways of signing in the console offers: the operator's only when the deployment sets its credentials. */
export interface SignInOptions {
  customer: boolean;
  operator: boolean;
}

export interface SessionView {
  kind: 'customer' | 'operator';
  customerId: string | null;
  csrfToken: string;
  expiresAt: string;
}

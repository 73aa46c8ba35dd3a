/**
 * The console at /console: its sign-in, its session, the API it calls, and its static files.
 *
 * - `GET /console/api/sign-in` answers which ways of signing in are on (the operator's only with
 *   ADMIN_USERNAME and ADMIN_PASSWORD set), so that the page offers no way that is off.
 * - `POST /console/api/session` signs in with a customer's ID and secret, or with the operator's
 *   ADMIN_USERNAME/ADMIN_PASSWORD, and sets the session cookie (HttpOnly, SameSite=Strict, Secure
 *   behind https); `GET` answers who is signed in and the CSRF token; `DELETE` signs out.
 * - `/console/api/customer/v1/...` is the API's customer routes, called as the signed-in customer;
 *   `/console/api/apps/<applicationID>/v1/...` is the API's application routes, called as that
 *   application once it is known to belong to the signed-in customer. Both go through the same
 *   route table, validation, rate limit and proxy as a bearer-token call; the browser never sees a
 *   token or a secret (but the one shown when an application is created or rotated).
 * - `/console/api/operator/...` is the operator's: processes and queues.
 * Every call but a GET needs the session's CSRF token in `X-CSRF-Token`.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiError, s, type Cidr, type RouteDef, type RouteMatch, type RouteMatcher } from '@collab/shared';
import express, { type Request, type Response, type Router } from 'express';
import type { Caller } from '../auth/authenticate.js';
import { credentialsMatch, type OperatorCredentials } from '../admin/queue-dashboard.js';
import { clientAddress } from './client-address.js';
import { sameSecret, type ConsoleSession, type SessionStore } from './sessions.js';
import type { SignInLimit } from './sign-in-limit.js';

export const CONSOLE_PATH = '/console';
export const SESSION_COOKIE = 'console_session';
/** The built front end (console/dist), the same place in the repository and in the image. */
export const CONSOLE_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../console/dist');

// The front end's bundle is all from this origin: scripts, styles, fonts and images.
const CONSOLE_CSP = "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export interface ConsoleDeps {
  sessions: SessionStore;
  signInLimit: SignInLimit;
  /** Proxies whose X-Forwarded-For names the client to the sign-in limit (TRUSTED_PROXY_CIDRS). */
  trustedProxies: readonly Cidr[];
  operator: OperatorCredentials | null;
  matcher: RouteMatcher<RouteDef>;
  /** Who owns an application (its customer), or null when there is none. */
  applicationOwner: (applicationId: string, requestId: string) => Promise<string | null>;
  /** Checks customer credentials: true when the customer exists and the secret is its secret. */
  customerSecretMatches: (customerId: string, secret: string, requestId: string) => Promise<boolean>;
  /** Forwards an API route's request as this caller (the gateway's own forwarding). */
  forwardAs: (req: Request, res: Response, match: RouteMatch<RouteDef>, caller: Caller) => void;
  /**
   * Deletes an application of the customer when `name` is its name. The API's delete takes the
   * application's secret, which the browser never has: the gateway gives it, from identity.
   */
  deleteApplication: (customerId: string, applicationId: string, name: string, requestId: string) => Promise<void>;
  /** A short-lived server token of the customer's application (the token helper). */
  mintServerToken: (customerId: string, applicationId: string, requestId: string) => Promise<{ token: string; expiresAt: string }>;
  /** The operator's view of the processes and queues. */
  operatorStatus: (requestId: string) => Promise<unknown>;
}

const signInBody = s.object({
  customerId: s.string().optional(),
  secret: s.string().optional(),
  username: s.string().optional(),
  password: s.string().optional(),
});

const deleteBody = s.object({ name: s.string({ minLength: 1 }) });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Behind a TLS-terminating proxy the request says https in X-Forwarded-Proto. */
function overHttps(req: Request): boolean {
  return req.protocol === 'https' || String(req.headers['x-forwarded-proto'] ?? '').split(',')[0]?.trim() === 'https';
}

function sessionCookie(req: Request, value: string, maxAgeSeconds: number): string {
  const flags = [`${SESSION_COOKIE}=${value}`, `Path=${CONSOLE_PATH}`, 'HttpOnly', 'SameSite=Strict', `Max-Age=${maxAgeSeconds}`];
  if (overHttps(req)) flags.push('Secure');
  return flags.join('; ');
}

function sessionView(session: ConsoleSession) {
  return {
    kind: session.kind,
    customerId: session.kind === 'customer' ? session.customerId : null,
    csrfToken: session.csrfToken,
    expiresAt: session.expiresAt,
  };
}

export function createConsoleRouter(deps: ConsoleDeps): Router {
  const router = express.Router();
  const requestId = (res: Response) => String((res.locals.request as { requestId: string }).requestId);

  router.use('/api', (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });

  router.get('/api/sign-in', (_req, res) => {
    res.json({ customer: true, operator: deps.operator !== null });
  });

  router.post('/api/session', express.json({ limit: '16kb' }), async (req, res) => {
    const body = signInBody.parse(req.body ?? {});
    const address = clientAddress(req, deps.trustedProxies);
    let identity: { kind: 'customer'; customerId: string } | { kind: 'operator' };
    if (body.username !== undefined || body.password !== undefined) {
      if (!deps.operator) throw new ApiError('not_found', 'Operator sign-in is off: ADMIN_USERNAME and ADMIN_PASSWORD are not set.');
      const given = { username: body.username ?? '', password: body.password ?? '' };
      await deps.signInLimit.check(address, `operator:${given.username}`);
      if (!credentialsMatch(given, deps.operator)) {
        await deps.signInLimit.failed(address, `operator:${given.username}`);
        throw new ApiError('invalid_authorization_header', 'The user name or password is wrong.');
      }
      identity = { kind: 'operator' };
    } else {
      if (!body.customerId) throw new ApiError('missing_field', 'customerId is required.');
      if (!body.secret) throw new ApiError('missing_field', 'secret is required.');
      if (!UUID.test(body.customerId)) throw new ApiError('invalid_field', 'customerId is not valid: it must be a UUID.');
      const customerId = body.customerId.toLowerCase();
      await deps.signInLimit.check(address, customerId);
      if (!(await deps.customerSecretMatches(customerId, body.secret, requestId(res)))) {
        await deps.signInLimit.failed(address, customerId);
        throw new ApiError('invalid_customer_token', 'The customer ID or secret is wrong.');
      }
      identity = { kind: 'customer', customerId };
    }
    const { id, session } = await deps.sessions.create(identity);
    res.setHeader('Set-Cookie', sessionCookie(req, id, deps.sessions.ttlSeconds));
    res.json(sessionView(session));
  });

  // Every other API call needs a session, and a CSRF token unless it only reads.
  router.use('/api', async (req, res, next) => {
    const id = readCookie(req, SESSION_COOKIE);
    const session = id ? await deps.sessions.get(id) : null;
    if (!session) throw new ApiError('invalid_authorization_header', 'Not signed in, or the session has expired. Sign in again.');
    if (req.method !== 'GET' && req.method !== 'HEAD' && !sameSecret(req.get('x-csrf-token'), session.csrfToken))
      throw new ApiError('invalid_authorization_header', 'The X-CSRF-Token header is missing or wrong. Reload the page.');
    res.locals.session = session;
    res.locals.sessionId = id;
    // The cookie and CSRF token are the console's: the services never see them.
    delete req.headers.cookie;
    delete req.headers['x-csrf-token'];
    next();
  });

  router.get('/api/session', (_req, res) => {
    res.json(sessionView(res.locals.session as ConsoleSession));
  });

  router.delete('/api/session', async (req, res) => {
    await deps.sessions.delete(res.locals.sessionId as string);
    res.setHeader('Set-Cookie', sessionCookie(req, '', 0));
    res.status(204).end();
  });

  const customerOf = (res: Response): string => {
    const session = res.locals.session as ConsoleSession;
    if (session.kind !== 'customer') throw new ApiError('not_found', 'This part of the console is for customers.');
    return session.customerId;
  };

  /** The API route a console call names, which must be of this token kind. */
  const apiRoute = (req: Request, apiPath: string, auth: 'customer' | 'app') => {
    const lookup = deps.matcher.lookup(req.method, apiPath);
    if (lookup.kind === 'match' && lookup.match.route.auth === auth) return lookup.match;
    if (lookup.kind === 'method_not_allowed')
      throw new ApiError('method_not_allowed', `${req.method} is not allowed on ${apiPath}.`, { headers: { Allow: [...new Set(lookup.allowed)].join(', ') } });
    throw new ApiError('not_found', `No route for ${req.method} ${apiPath}.`);
  };

  /** The API path and query of a console call: what follows `prefix` in the request's URL. */
  const apiTarget = (req: Request, prefix: string) => {
    const rest = req.url.slice(prefix.length);
    const query = rest.indexOf('?');
    return { url: rest, pathname: query === -1 ? rest : rest.slice(0, query) };
  };

  router.use('/api/customer/v1', (req, res) => {
    const customerId = customerOf(res);
    const target = apiTarget(req, '');
    const apiPath = `/v1${target.pathname}`;
    const match = apiRoute(req, apiPath, 'customer');
    req.url = `/v1${target.url}`;
    deps.forwardAs(req, res, match, { customerId });
  });

  router.use('/api/apps/:applicationID/v1', async (req, res) => {
    const customerId = customerOf(res);
    const applicationId = String(req.params.applicationID).toLowerCase();
    // Another customer's application answers as one that does not exist.
    const owner = UUID.test(applicationId) ? await deps.applicationOwner(applicationId, requestId(res)) : null;
    if (owner?.toLowerCase() !== customerId) throw new ApiError('not_found', `Application ${req.params.applicationID} not found.`);
    const target = apiTarget(req, '');
    const match = apiRoute(req, `/v1${target.pathname}`, 'app');
    req.url = `/v1${target.url}`;
    deps.forwardAs(req, res, match, { applicationId });
  });

  router.post('/api/applications/:applicationID/delete', express.json({ limit: '16kb' }), async (req, res) => {
    const customerId = customerOf(res);
    const { name } = deleteBody.parse(req.body ?? {});
    await deps.deleteApplication(customerId, String(req.params.applicationID).toLowerCase(), name, requestId(res));
    res.json({ success: true });
  });

  router.post('/api/applications/:applicationID/token', async (req, res) => {
    const customerId = customerOf(res);
    res.json(await deps.mintServerToken(customerId, String(req.params.applicationID).toLowerCase(), requestId(res)));
  });

  router.get('/api/operator/status', async (_req, res) => {
    if ((res.locals.session as ConsoleSession).kind !== 'operator') throw new ApiError('not_found', 'This part of the console is for the operator.');
    res.json(await deps.operatorStatus(requestId(res)));
  });

  router.use('/api', (req) => {
    throw new ApiError('not_found', `No route for ${req.method} ${req.baseUrl}${req.path}.`);
  });

  // The front end: hashed assets cached for long, every other path its one page.
  router.use((_req, res, next) => {
    res.setHeader('Content-Security-Policy', CONSOLE_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  });
  router.use('/assets', express.static(path.join(CONSOLE_DIST, 'assets'), { immutable: true, maxAge: '365d', fallthrough: false }));
  router.get('/{*page}', (_req, res, next) => {
    const index = path.join(CONSOLE_DIST, 'index.html');
    if (!existsSync(index)) throw new ApiError('not_found', 'The console is not built: run npm run build.');
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index, (error) => {
      if (error) next(error);
    });
  });
  return router;
}

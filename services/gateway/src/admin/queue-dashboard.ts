/**
 * The operators' BullMQ dashboard (bull-board) at /admin/queues, behind HTTP Basic auth with the
 * ADMIN_USERNAME / ADMIN_PASSWORD credentials. It is not an API route: no application or customer
 * token (Bearer) is ever accepted here, and without operator credentials configured it answers 404.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '@collab/shared';
import type { Queue } from 'bullmq';
import type { RequestHandler } from 'express';

export const QUEUE_DASHBOARD_PATH = '/admin/queues';

export interface OperatorCredentials {
  username: string;
  password: string;
}

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** Both compared in constant time on SHA-256 digests (equal lengths whatever the input). */
export function credentialsMatch(given: OperatorCredentials, expected: OperatorCredentials): boolean {
  const userOk = timingSafeEqual(digest(given.username), digest(expected.username));
  const passwordOk = timingSafeEqual(digest(given.password), digest(expected.password));
  return userOk && passwordOk;
}

function parseBasic(header: string | undefined): OperatorCredentials | null {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** 404 when no operator credentials are configured; 401 with a Basic challenge unless they are given. */
export function operatorAuth(credentials: OperatorCredentials | null): RequestHandler {
  return (req, res, next) => {
    if (!credentials) {
      next(new ApiError('not_found', `No route for ${req.method} ${req.baseUrl}${req.path === '/' ? '' : req.path}.`));
      return;
    }
    const given = parseBasic(req.headers.authorization);
    if (!given || !credentialsMatch(given, credentials)) {
      res.setHeader('Cache-Control', 'no-store');
      next(new ApiError('invalid_authorization_header', 'Operator credentials required.', {
        headers: { 'WWW-Authenticate': 'Basic realm="queues"' },
      }));
      return;
    }
    next();
  };
}

/**
 * The bull-board router for these queues, to be mounted at QUEUE_DASHBOARD_PATH (behind
 * operatorAuth). bull-board and its UI are loaded at the first request that reaches it, so a
 * gateway without operator credentials never loads them (tens of MB of memory).
 */
export function createQueueDashboardRouter(queues: Queue[]): RequestHandler {
  let router: Promise<RequestHandler> | null = null;
  const load = async (): Promise<RequestHandler> => {
    const [{ createBullBoard }, { BullMQAdapter }, { ExpressAdapter }] = await Promise.all([
      import('@bull-board/api'),
      import('@bull-board/api/bullMQAdapter'),
      import('@bull-board/express'),
    ]);
    const serverAdapter = new ExpressAdapter();
    serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
    createBullBoard({ queues: queues.map((queue) => new BullMQAdapter(queue)), serverAdapter });
    return serverAdapter.getRouter() as RequestHandler;
  };
  return (req, res, next) => {
    router ??= load();
    router.then((handler) => handler(req, res, next), next);
  };
}

/**
 * The operators' BullMQ dashboard (bull-board) at /admin/queues, behind HTTP Basic auth with the
 * ADMIN_USERNAME / ADMIN_PASSWORD credentials. It is not an API route: no application or customer
 * token (Bearer) is ever accepted here, and without operator credentials configured it answers 404.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '@collab/shared';
import type { Queue } from 'bullmq';
import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type RequestHandler } from 'express';

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

export function parseBasic(header: string | undefined): OperatorCredentials | null {
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
  const fonts = localFonts();
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
    res.setHeader('Content-Security-Policy', DASHBOARD_CSP);
    if (req.path.startsWith(FONTS_PATH)) {
      fonts(req, res, next);
      return;
    }
    router ??= load();
    // The page links its fonts from a font CDN: it gets the same fonts from this gateway instead.
    const render = res.render.bind(res) as (view: string, options: object, callback: (error: Error | null, html: string) => void) => void;
    res.render = ((view: string, options: object) =>
      render(view, options, (error, html) => (error ? next(error) : res.send(html.replace(FONT_CDN_LINK, LOCAL_FONT_LINKS))))) as typeof res.render;
    router.then((handler) => handler(req, res, next), next);
  };
}

// Nothing the dashboard loads leaves this gateway; its page has inline styles and a JSON block.
const DASHBOARD_CSP = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'";
const FONTS_PATH = '/fonts/';
const FONT_CDN_LINK = /<link href="https:\/\/fonts\.googleapis\.com\/[^"]*" rel="stylesheet">/;
// Relative to the page's <base href>, the dashboard's path.
const LOCAL_FONT_LINKS = ['ibm-plex-sans/400', 'ibm-plex-sans/500', 'ibm-plex-sans/600', 'ibm-plex-mono/400', 'ibm-plex-mono/500']
  .map((sheet) => `<link href="fonts/${sheet}.css" rel="stylesheet">`)
  .join('');

/** The IBM Plex fonts the dashboard uses, from @fontsource (their CSS and font files). */
function localFonts(): RequestHandler {
  const router = express.Router();
  for (const family of ['ibm-plex-sans', 'ibm-plex-mono']) {
    const dir = path.dirname(createRequire(import.meta.url).resolve(`@fontsource/${family}/package.json`));
    router.use(`${FONTS_PATH}${family}`, express.static(dir, { maxAge: '7d', fallthrough: false }));
  }
  return router;
}

/**
 * What the fuzz tests (test/resilience/fuzz-*.test.ts) share: a system with one application and a
 * token for each kind of route, the answer they read off the wire, and the check every answer passes.
 */
import type http from 'node:http';
import { ERROR_CATALOG, type RouteDef } from '@collab/shared';
import { expect } from 'vitest';
import { createApplication, type TestApplication } from './client.js';
import { startSystem, type TestSystem } from './system.js';
import { customerToken, serverToken } from './tokens.js';

/** An HTTP answer as received: its body parsed as JSON where it is JSON, undefined otherwise. */
export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: unknown;
}

/** A bearer token for each kind of route (route.auth) that takes one. */
export type RouteTokens = Partial<Record<RouteDef['auth'], string>>;

/** A whole system, an application in it and the tokens to call every route with. */
export async function startFuzzSystem(applicationName: string): Promise<{ system: TestSystem; app: TestApplication; tokens: RouteTokens }> {
  const system = await startSystem();
  const app = await createApplication(system, applicationName);
  const tokens: RouteTokens = {
    app: await serverToken(app.id, app.secret),
    customer: await customerToken(system.customer.id, system.customer.secret),
  };
  return { system, app, tokens };
}

/** `text` parsed as JSON, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Below 500 and with a request id; an error (4xx) is exactly the envelope of api.md: `{error,
 * message}`, a catalog code and a non-empty text. `status` and `code`, when given, must match too.
 */
export function expectEnvelope(answer: Answer, status?: number, code?: string): void {
  const summary = `${answer.status} ${answer.text.slice(0, 500)}`;
  expect(answer.status, summary).toBeLessThan(500);
  if (status !== undefined) expect(answer.status, summary).toBe(status);
  expect(answer.headers['x-request-id'], summary).toBeTruthy();
  if (answer.status < 400) return;
  expect(answer.headers['content-type'], summary).toMatch(/^application\/json/);
  const body = answer.body as Record<string, unknown>;
  expect(Object.keys(body ?? {}).sort(), summary).toEqual(['error', 'message']);
  expect(Object.keys(ERROR_CATALOG), summary).toContain(body.error);
  if (code !== undefined) expect(body.error, summary).toBe(code);
  expect(typeof body.message === 'string' && body.message.length > 0, summary).toBe(true);
}

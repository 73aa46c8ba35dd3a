/**
 * Service-to-service HTTP. Every call carries the internal credential and the request id;
 * an unreachable or failing dependency becomes `503 service_unavailable`,
 * never a misleading 4xx, and a downstream API error is re-raised with its own code.
 */
import http from 'node:http';
import https from 'node:https';
import { ApiError, isErrorBody, unavailable } from '../errors.js';
import { INTERNAL_HEADERS } from '../internal-headers.js';

export interface InternalCallOptions {
  requestId?: string;
  applicationId?: string;
  body?: unknown;
  /** This call's own deadline, for calls that carry a large batch (default: the client's). */
  timeoutMs?: number;
}

export interface InternalClient {
  call<T>(method: string, path: string, options?: InternalCallOptions): Promise<T>;
}

/** Idle connections are closed before a server's default keep-alive timeout (5 s) could close them under a request. */
const IDLE_CONNECTION_MS = 4000;

export function createInternalClient(config: {
  baseUrl: string;
  internalToken: string;
  service: string;
  timeoutMs?: number;
}): InternalClient {
  const timeoutMs = config.timeoutMs ?? 5000;
  // node:http rather than fetch: one write per request (headers and body together) and far less
  // work per call, on the path of every message create; connections are kept and reused.
  // Made at the first call: a process that never calls may be configured without this URL.
  let connections: { transport: typeof http | typeof https; agent: http.Agent } | null = null;
  return {
    async call<T>(method: string, path: string, options: InternalCallOptions = {}): Promise<T> {
      const headers: Record<string, string> = { [INTERNAL_HEADERS.internalToken]: config.internalToken };
      if (options.requestId) headers[INTERNAL_HEADERS.requestId] = options.requestId;
      if (options.applicationId) headers[INTERNAL_HEADERS.applicationId] = options.applicationId;
      const body = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
      if (body) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = String(body.length);
      }
      let url: URL;
      try {
        url = new URL(`${config.baseUrl}${path}`);
      } catch {
        throw serviceUnavailable(config.service);
      }
      if (!connections) {
        const transport = url.protocol === 'https:' ? https : http;
        connections = { transport, agent: new transport.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }) };
      }
      const answer = await exchange(connections.transport, connections.agent, url, { method, headers, body }, options.timeoutMs ?? timeoutMs);
      if (answer === 'unreachable') throw serviceUnavailable(config.service);
      let payload: unknown;
      try {
        if (answer.text === null) throw new Error('the answer broke off');
        payload = answer.text === '' ? undefined : JSON.parse(answer.text);
      } catch {
        // It answered, but not with JSON: a broken dependency rather than a missing one.
        throw new ApiError('bad_gateway', `The ${config.service} service answered with an invalid response.`);
      }
      if (answer.status >= 200 && answer.status < 300) return payload as T;
      if (answer.status < 500 && isErrorBody(payload))
        throw new ApiError(payload.error, payload.message, { status: answer.status });
      throw serviceUnavailable(config.service);
    },
  };
}

/**
 * One request: 'unreachable' when no answer's head arrived within the deadline (refused, reset,
 * timed out), else its status and text (null when the body broke off or outlived the deadline).
 */
function exchange(
  transport: typeof http | typeof https,
  agent: http.Agent,
  url: URL,
  request: { method: string; headers: Record<string, string>; body?: Buffer },
  deadlineMs: number,
): Promise<'unreachable' | { status: number; text: string | null }> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (value: 'unreachable' | { status: number; text: string | null }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    let status: number | null = null;
    let req: http.ClientRequest;
    const timer = setTimeout(() => {
      req.destroy();
      settle(status === null ? 'unreachable' : { status, text: null });
    }, deadlineMs);
    try {
      req = transport.request(url, { method: request.method, headers: request.headers, agent }, onResponse);
    } catch {
      // A URL node:http cannot take (another protocol): nothing to reach there.
      settle('unreachable');
      return;
    }
    req.on('error', () => settle(status === null ? 'unreachable' : { status, text: null }));
    req.end(request.body);

    function onResponse(res: http.IncomingMessage) {
      status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => settle({ status: status!, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => settle({ status: status!, text: null }));
      res.on('aborted', () => settle({ status: status!, text: null }));
    }
  });
}

function serviceUnavailable(service: string): ApiError {
  return unavailable(`The ${service} service is unavailable. Try again.`);
}

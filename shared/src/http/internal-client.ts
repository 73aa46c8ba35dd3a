/**
 * Service-to-service HTTP. Every call carries the internal credential and the request id;
 * an unreachable or failing dependency becomes `503 service_unavailable`,
 * never a misleading 4xx, and a downstream API error is re-raised with its own code.
 */
import { ApiError, isErrorBody } from '../errors.js';
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

export function createInternalClient(config: {
  baseUrl: string;
  internalToken: string;
  service: string;
  timeoutMs?: number;
}): InternalClient {
  const timeoutMs = config.timeoutMs ?? 5000;
  return {
    async call<T>(method: string, path: string, options: InternalCallOptions = {}): Promise<T> {
      const headers: Record<string, string> = { [INTERNAL_HEADERS.internalToken]: config.internalToken };
      if (options.requestId) headers[INTERNAL_HEADERS.requestId] = options.requestId;
      if (options.applicationId) headers[INTERNAL_HEADERS.applicationId] = options.applicationId;
      if (options.body !== undefined) headers['content-type'] = 'application/json';
      let response: Response;
      try {
        response = await fetch(`${config.baseUrl}${path}`, {
          method,
          headers,
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
          signal: AbortSignal.timeout(options.timeoutMs ?? timeoutMs),
        });
      } catch {
        throw unavailable(config.service);
      }
      let payload: unknown;
      try {
        const text = await response.text();
        payload = text === '' ? undefined : JSON.parse(text);
      } catch {
        // It answered, but not with JSON: a broken dependency rather than a missing one.
        throw new ApiError('bad_gateway', `The ${config.service} service answered with an invalid response.`);
      }
      if (response.ok) return payload as T;
      if (response.status < 500 && isErrorBody(payload))
        throw new ApiError(payload.error, payload.message, { status: response.status });
      throw unavailable(config.service);
    },
  };
}

function unavailable(service: string): ApiError {
  return new ApiError('service_unavailable', `The ${service} service is unavailable. Try again.`, {
    headers: { 'Retry-After': '1' },
  });
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler } from 'express';
import { ApiError } from '../errors.js';
import type { Logger } from '../logger.js';

/** Maps the framework's failures (body-parser, Express's path decoding) to the API's codes. */
function fromFramework(error: { type?: string; status?: number; limit?: number }): ApiError | null {
  // Express cannot percent-decode a path parameter (`%E0%A4%A`).
  if (error instanceof URIError) return new ApiError('invalid_request', 'Request path is not valid percent-encoding.');
  switch (error.type) {
    case 'entity.too.large':
      // The public limit (10 MB), or an internal route's own.
      return new ApiError('payload_too_large', `Request body is larger than ${Math.round((error.limit ?? 0) / 1024 / 1024)} MB.`);
    case 'request.aborted':
    case 'request.size.invalid':
    case 'encoding.unsupported':
    case 'charset.unsupported':
    case 'entity.verify.failed':
      return new ApiError('invalid_request', 'Request body could not be read.');
    default:
      return null;
  }
}

declare module 'express-serve-static-core' {
  interface Request {
    /** The request's logger, carrying its request id (set by the gateway's Express app). */
    log?: Logger;
  }
}

/**
 * The one place errors become HTTP: ApiError renders as `{error, message}` with its status;
 * anything else is logged with its stack and answered with an opaque 500.
 */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => sendError(req, res, error, req.log ?? logger);
}

/** What errorMiddleware does, for a handler that runs outside Express (the gateway's forwarding). */
export function sendError(req: IncomingMessage, res: ServerResponse, error: unknown, log: Logger): void {
  const apiError = error instanceof ApiError ? error : fromFramework(error as { type?: string; status?: number });
  if (!apiError) log.error({ err: error, method: req.method, path: (req.url ?? '').split('?')[0] }, 'unexpected error');
  const rendered = apiError ?? new ApiError('error');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  whenBodyRead(req, res, rendered.code === 'payload_too_large', () => writeApiError(res, rendered));
}

/** Answers with the error: its status and headers, and `{error, message}` as JSON. */
export function writeApiError(res: ServerResponse, error: ApiError): void {
  const body = JSON.stringify(error.toBody());
  res.writeHead(error.status, { ...error.headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Answers once the request body is read to its end. An error may come before it was (a check that
 * comes first, a route that takes no body), and Node stops reading a keep-alive connection whose
 * body is left unread after the response: the client's upload, or the gateway's proxying of it,
 * would stall until the keep-alive timeout. A body refused for its size is answered at once,
 * and its connection closed: the server ends that answer once it has read and thrown away the rest
 * of the body (bounded, see createHttpServer), so that a client still sending it reads the 413.
 */
function whenBodyRead(req: IncomingMessage, res: ServerResponse, tooLarge: boolean, answer: () => void): void {
  if (req.complete || req.destroyed) answer();
  else if (tooLarge) {
    res.setHeader('Connection', 'close');
    answer();
  } else {
    req.unpipe();
    req.once('end', answer);
    req.resume();
  }
}

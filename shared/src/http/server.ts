/**
 * The HTTP server of every process: Node's server with the deadlines it is given, a keep-alive
 * longer than any load balancer's, and the error envelope for requests Node refuses before any
 * handler runs (a head over 16 KB, a malformed request line, a client too slow).
 */
import { randomUUID } from 'node:crypto';
import http, { type RequestListener } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, type ErrorCode } from '../errors.js';

export interface HttpServerOptions {
  /** The whole request must arrive within this (Node's default: 300 s). */
  requestTimeoutMs?: number;
  /** The request's head must arrive within this (Node's default: 60 s). */
  headersTimeoutMs?: number;
}

/** How often Node looks for requests past their deadline (its default is every 30 s). */
const CHECK_INTERVAL_MS = 1000;
/** Longer than any load balancer's idle timeout, so that the balancer closes first. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

export function createHttpServer(handler: RequestListener, options: HttpServerOptions = {}): http.Server {
  const server = http.createServer(
    {
      ...(options.requestTimeoutMs !== undefined && { requestTimeout: options.requestTimeoutMs }),
      ...(options.headersTimeoutMs !== undefined && { headersTimeout: options.headersTimeoutMs }),
      connectionsCheckingInterval: CHECK_INTERVAL_MS,
    },
    handler,
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.on('clientError', answerClientError);
  return server;
}

function clientErrorOf(error: NodeJS.ErrnoException): [ErrorCode, string] {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return ['headers_too_large', 'Request headers are larger than 16 KB.'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return ['request_timeout', 'The request was not received in time.'];
    default:
      return ['invalid_request', 'Malformed HTTP request.'];
  }
}

/** There is no response object yet: the answer is written to the socket as Node's own would be. */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // A response already under way (a handler answered) cannot be replaced: close as Node does.
  const pending = (socket as Duplex & { _httpMessage?: http.ServerResponse })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || pending?.headersSent) {
    socket.destroy();
    return;
  }
  const apiError = new ApiError(...clientErrorOf(error));
  const body = JSON.stringify(apiError.toBody());
  socket.end(
    `HTTP/1.1 ${apiError.status} ${http.STATUS_CODES[apiError.status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      // Every answer carries a request id, this one too (it names no request that was read).
      `X-Request-Id: ${randomUUID()}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

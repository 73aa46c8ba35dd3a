/**
 * The HTTP server of every process: Node's server with the deadlines it is given, a keep-alive
 * longer than any load balancer's, answers that wait for the rest of a body still arriving before
 * they end, and the error envelope for requests Node refuses before any handler runs (a head over
 * 16 KB, a malformed request line, a client too slow, a CONNECT).
 */
import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, type ErrorCode } from '../errors.js';
import { MAX_JSON_BODY_BYTES } from './json-body.js';

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
/** The rest of a body answered early is read for at most this long… */
const DISCARD_MAX_MS = 5000;
/** …and at most this many bytes (four times the body limit), whichever comes first. */
const DISCARD_MAX_BYTES = 4 * MAX_JSON_BODY_BYTES;

export function createHttpServer(handler: RequestListener, options: HttpServerOptions = {}): http.Server {
  const server = http.createServer(
    {
      ...(options.requestTimeoutMs !== undefined && { requestTimeout: options.requestTimeoutMs }),
      ...(options.headersTimeoutMs !== undefined && { headersTimeout: options.headersTimeoutMs }),
      connectionsCheckingInterval: CHECK_INTERVAL_MS,
    },
    (req, res) => {
      endAfterBody(req, res);
      handler(req, res);
    },
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.on('clientError', answerClientError);
  server.on('connect', answerConnect);
  return server;
}

/**
 * A response that ends while its request's body is still arriving (a body refused for its size,
 * here or by the service behind the gateway) goes out at once, but ends only once the rest of the
 * body has been read and thrown away. Ended at once, Node would close the connection (as a 413
 * asks) with those bytes unread, which resets it: a client that writes its whole body before it
 * reads the answer (most HTTP libraries do) would see a broken pipe instead of the 413. Past the
 * bounds above the connection is cut instead, so that no client can keep the server reading.
 */
function endAfterBody(req: IncomingMessage, res: ServerResponse): void {
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.end = ((...args: unknown[]) => {
    if (req.complete || req.destroyed) return end(...args);
    const callback = typeof args.at(-1) === 'function' ? args.pop() : undefined;
    const [chunk, encoding] = args as [string | Buffer | null | undefined, BufferEncoding | undefined];
    if (chunk !== undefined && chunk !== null) {
      // The length Node would have set from this last chunk: the answer is complete at once.
      if (!res.headersSent && !res.hasHeader('content-length')) res.setHeader('Content-Length', Buffer.byteLength(chunk, encoding));
      res.write(chunk, encoding ?? 'utf8');
    }
    discardBody(req, () => end(callback));
    return res;
  }) as ServerResponse['end'];
}

/** Reads `req`'s body to its end without keeping it, within the bounds; then `done`. */
function discardBody(req: IncomingMessage, done: () => void): void {
  let discarded = 0;
  const stop = () => {
    clearTimeout(timer);
    req.off('data', discard).off('end', stop).off('close', stop);
    done();
  };
  const cut = () => {
    stop();
    req.socket.destroy();
  };
  const discard = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DISCARD_MAX_BYTES) cut();
  };
  const timer = setTimeout(cut, DISCARD_MAX_MS);
  req.unpipe();
  req.on('data', discard).once('end', stop).once('close', stop);
  req.resume();
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
  endWithError(socket, new ApiError(...clientErrorOf(error)));
}

/**
 * CONNECT asks for a tunnel, which no process here offers. Node hands such a request to a
 * 'connect' listener instead of the app, and without one drops the connection with no answer:
 * answer 405 in the envelope, as for any other method the API does not know.
 */
function answerConnect(_req: IncomingMessage, socket: Duplex): void {
  endWithError(socket, new ApiError('method_not_allowed', 'CONNECT is not allowed: this server is not a proxy.'));
}

/** Writes `apiError` straight to the socket as Node's own answer would be, and closes it. */
function endWithError(socket: Duplex, apiError: ApiError): void {
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

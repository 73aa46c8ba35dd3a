/** Answers without a framework: the JSON every route answers, and what a handler needs of its request. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';

/** An answer already serialised as JSON (built by PostgreSQL): sent without parsing it again. */
export class JsonText {
  constructor(readonly text: string) {}
}

/** Sends `body` as JSON (a JsonText as it is) with the response's status (200 unless the handler set another). */
export function sendJson(res: ServerResponse, body: unknown): void {
  const text = body instanceof JsonText ? body.text : (JSON.stringify(body) ?? '');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** `http` or `https`: how the request reached this process. */
export function requestProtocol(req: IncomingMessage): string {
  return (req.socket as TLSSocket).encrypted ? 'https' : 'http';
}

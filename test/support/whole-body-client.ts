/**
 * A client that writes its whole request before it looks at the answer, as Python's http.client
 * and requests do, over a raw socket: the body is written to its end whatever the server answers
 * meanwhile, and only a failed write stops it. A server that closes the connection while such a
 * client is still sending resets it, and the client sees a broken pipe instead of the answer.
 */
import http from 'node:http';
import net from 'node:net';

export interface WholeBodyExchange {
  /** The first answer on the connection, when it arrived complete (head and Content-Length body). */
  answer: { status: number; headers: http.IncomingHttpHeaders; body: unknown } | null;
  /** Bytes of the request the connection had taken when the answer was complete. */
  bytesWrittenAtAnswer: number | null;
  /** How writing the request failed (EPIPE, ECONNRESET), or null when all of it was written. */
  writeError: string | null;
  /** Bytes of the request the connection took before it closed. */
  bytesWritten: number;
}

/**
 * Sends `head` then every chunk of `body` (stopping early only when a write fails or the server
 * closes the connection), and resolves once the connection is closed, or once all is written and a
 * complete answer has arrived.
 */
export function sendWholeBody(baseUrl: string, head: string, body: Iterable<Buffer> | AsyncIterable<Buffer>): Promise<WholeBodyExchange> {
  const { hostname, port } = new URL(baseUrl);
  const socket = net.connect(Number(port), hostname);
  const received: Buffer[] = [];
  let writeError: string | null = null;
  let bytesWrittenAtAnswer: number | null = null;
  socket.on('data', (chunk: Buffer) => {
    received.push(chunk);
    if (bytesWrittenAtAnswer === null && parseAnswer(Buffer.concat(received))) bytesWrittenAtAnswer = socket.bytesWritten;
  });
  socket.on('error', (error: NodeJS.ErrnoException) => {
    writeError ??= error.code ?? error.message;
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const answered = new Promise<void>((resolve) => {
    const check = () => {
      if (bytesWrittenAtAnswer === null) return;
      socket.off('data', check);
      resolve();
    };
    socket.on('data', check);
  });
  const writable = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        socket.off('drain', done).off('close', done);
        resolve();
      };
      socket.on('drain', done).on('close', done);
    });
  return (async () => {
    await new Promise<void>((resolve) => {
      socket.once('connect', resolve);
      socket.once('close', resolve);
    });
    socket.write(head);
    for await (const chunk of body) {
      if (socket.destroyed) break;
      if (!socket.write(chunk)) await writable();
    }
    await Promise.race([closed, answered]);
    socket.destroy();
    return { answer: parseAnswer(Buffer.concat(received)), bytesWrittenAtAnswer, writeError, bytesWritten: socket.bytesWritten };
  })();
}

function parseAnswer(bytes: Buffer): WholeBodyExchange['answer'] {
  const split = bytes.indexOf('\r\n\r\n');
  if (split < 0) return null;
  const [statusLine, ...lines] = bytes.subarray(0, split).toString('latin1').split('\r\n');
  const headers: http.IncomingHttpHeaders = {};
  for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
  const length = Number(headers['content-length']);
  const payload = bytes.subarray(split + 4, split + 4 + length);
  if (!Number.isInteger(length) || payload.length < length) return null;
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(payload.toString('utf8')) };
}

/** `total` bytes of `byte`, in chunks of 1 MB, without holding them all in memory. */
export function* repeatedBytes(total: number, byte = 'x'): Generator<Buffer> {
  const chunk = Buffer.alloc(1024 * 1024, byte);
  for (let sent = 0; sent < total; sent += chunk.length) yield chunk.subarray(0, Math.min(chunk.length, total - sent));
}

/** The same body in HTTP/1.1 chunked framing (no Content-Length). */
export function* chunked(body: Iterable<Buffer>): Generator<Buffer> {
  for (const chunk of body) yield Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
  yield Buffer.from('0\r\n\r\n');
}

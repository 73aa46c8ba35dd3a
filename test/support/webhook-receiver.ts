/**
 * A webhook receiver as a customer writes one from the original SDK's documentation: it reads the
 * raw body, checks it with `validateWebhookSignature` and reads it with `parseWebhookBody`. Each
 * test decides how it answers (a status, a Retry-After, never answering).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { parseWebhookBody, validateWebhookSignature } from '@cord-sdk/server';
import { expect } from 'vitest';
import type { TestApplication } from './client.js';
import { systemForFile, type FileSystemOptions, type TestSystem } from './system.js';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** What the SDK made of it: the parsed body, or why it refused the request. */
  verified: boolean;
  error: string | null;
  body: ReturnType<typeof parseWebhookBody> | null;
  at: number;
}

/** How the receiver answers one request: a status (and headers), or `hang` (never answers). */
export type ReceiverAnswer = { status: number; headers?: Record<string, string> } | 'hang';

export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private answer: (request: ReceivedWebhook) => ReceiverAnswer = () => ({ status: 200 });
  private readonly sockets = new Set<Socket>();
  private readonly hanging = new Set<ServerResponse>();
  private server: Server | null = null;
  private port = 0;

  /** `secretOf(applicationID)`: the secret the SDK checks the signature with. */
  constructor(private readonly secretOf: (applicationId: string) => string | undefined) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Listens (again, on the same port once it had one). */
  async start(): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        const received: ReceivedWebhook = { path: req.url ?? '/', headers: req.headers, rawBody, verified: false, error: null, body: null, at: Date.now() };
        try {
          const applicationId = (JSON.parse(rawBody) as { applicationID?: string }).applicationID ?? '';
          validateWebhookSignature(
            rawBody,
            req.headers['x-cord-timestamp'] as string | undefined,
            req.headers['x-cord-signature'] as string | undefined,
            this.secretOf(applicationId) ?? '',
          );
          received.body = parseWebhookBody(rawBody);
          received.verified = true;
        } catch (error) {
          received.error = (error as Error).message;
        }
        this.received.push(received);
        const answer = this.answer(received);
        if (answer === 'hang') {
          this.hanging.add(res);
          return;
        }
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end('{"ok":true}');
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  /** Answers every following request with `answer`. */
  answerWith(answer: ReceiverAnswer | ((request: ReceivedWebhook) => ReceiverAnswer)): void {
    this.answer = typeof answer === 'function' ? answer : () => answer;
  }

  /**
   * Registers `app`'s webhook for `events` at a path of this receiver that is its own, so that a
   * test tells its requests from those of other tests; answers the path.
   */
  async register(app: TestApplication, events: readonly string[]): Promise<string> {
    const path = `/${randomUUID()}`;
    const registered = await app.client.post(`/v1/applications/${app.id}/webhooks`, { url: `${this.url}${path}`, events });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    return path;
  }

  /** Stops listening and drops every open connection (the receiver is down). */
  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    for (const socket of this.sockets) socket.destroy();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The requests received so far that match, once there are at least `count` of them. */
  async waitFor(match: (request: ReceivedWebhook) => boolean, count = 1, timeoutMs = 20_000): Promise<ReceivedWebhook[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.filter(match);
      if (found.length >= count) return found;
      if (Date.now() > deadline)
        throw new Error(`expected ${count} matching webhook requests within ${timeoutMs} ms, got ${found.length} (of ${this.received.length})`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/**
 * A test file's system (as systemForFile) that may deliver webhooks to this machine, and a receiver
 * that checks each request with the secret `secrets` holds for its application (the file records
 * each application's current one). The receiver stops before the system.
 */
export function systemWithReceiver(
  secrets: ReadonlyMap<string, string>,
  started: (ready: { system: TestSystem; receiver: WebhookReceiver }) => unknown,
  options: FileSystemOptions = {},
): void {
  let receiver: WebhookReceiver | undefined;
  systemForFile(
    async (system) => {
      receiver = await new WebhookReceiver((id) => secrets.get(id)).start();
      await started({ system, receiver });
    },
    {
      ...options,
      env: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', ...options.env },
      beforeStop: async () => {
        await options.beforeStop?.();
        await receiver?.stop();
      },
    },
  );
}

/**
 * Web pages for link-preview tests, served on a loopback address: each path answers as the test
 * says (a page, a status, a redirect, a held answer), and every request is counted per path.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestApplication } from '../support/client.js';
import { seedTeam } from '../support/seed.js';
import { systemWithApplication, type FileSystemOptions, type TestSystem } from '../support/system.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** An answer the test releases: the request has arrived once `arrived` resolves. */
export interface HeldPage {
  arrived: Promise<void>;
  release(): void;
}

export class PageServer {
  private readonly handlers = new Map<string, Handler>();
  private readonly counts = new Map<string, number>();
  private constructor(
    private readonly server: Server,
    readonly origin: string,
  ) {}

  static async start(host = '127.0.0.1'): Promise<PageServer> {
    let pages: PageServer | null = null;
    const server = createServer((req, res) => pages!.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
    pages = new PageServer(server, `http://${host}:${(server.address() as AddressInfo).port}`);
    return pages;
  }

  private handle(req: IncomingMessage, res: ServerResponse) {
    const path = (req.url ?? '/').split('?')[0];
    this.counts.set(path, this.hits(path) + 1);
    const handler = this.handlers.get(path);
    if (handler) handler(req, res);
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  }

  url(path: string): string {
    return `${this.origin}${path}`;
  }

  /** Requests this path has received. */
  hits(path: string): number {
    return this.counts.get(path) ?? 0;
  }

  /** Serves `body` at `path` (HTML with status 200 unless told otherwise). */
  page(path: string, body: string | Buffer, options: { status?: number; contentType?: string } = {}): string {
    this.handlers.set(path, (_req, res) => res.writeHead(options.status ?? 200, { 'content-type': options.contentType ?? 'text/html; charset=utf-8' }).end(body));
    return this.url(path);
  }

  /** Answers `path` with a redirect to `location`. */
  redirect(path: string, location: string, status = 302): string {
    this.handlers.set(path, (_req, res) => res.writeHead(status, { location }).end());
    return this.url(path);
  }

  /** Serves `body` at `path` only once the test releases it (never, for a page slower than any timeout). */
  hold(path: string, body: string): HeldPage & { url: string } {
    let arrive!: () => void;
    const arrived = new Promise<void>((resolve) => (arrive = resolve));
    let released = false;
    const waiting: ServerResponse[] = [];
    const answer = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/html' }).end(body);
    this.handlers.set(path, (_req, res) => {
      arrive();
      if (released) answer(res);
      else waiting.push(res);
    });
    return {
      url: this.url(path),
      arrived,
      release() {
        released = true;
        for (const res of waiting.splice(0)) if (!res.destroyed) answer(res);
      },
    };
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

/** An HTML page with these `<head>` tags. */
export function html(head: string, body = '<p>page</p>'): string {
  return `<!doctype html><html><head>${head}</head><body>${body}</body></html>`;
}

/**
 * A test file's system with link previews `on` or `off` and fetching allowed from 127.0.0.1 only,
 * an application with the team of seedTeam, and a page server on 127.0.0.1; the page server
 * closes before the system stops.
 */
export function systemWithPages(
  previews: 'on' | 'off',
  started: (ready: { system: TestSystem; app: TestApplication; pages: PageServer }) => unknown,
  options: FileSystemOptions = {},
): void {
  let pages: PageServer | undefined;
  systemWithApplication(
    `previews ${previews} app`,
    async ({ system, app }) => {
      await seedTeam(app);
      pages = await PageServer.start();
      await started({ system, app, pages });
    },
    {
      ...options,
      env: { LINK_PREVIEWS: previews, OUTBOUND_ALLOWED_CIDRS: '127.0.0.1/32', ...options.env },
      beforeStop: async () => {
        await options.beforeStop?.();
        await pages?.close();
      },
    },
  );
}

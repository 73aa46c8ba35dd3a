/**
 * Process lifecycle shared by every entry point: listen, and on SIGTERM/SIGINT flip readiness
 * to draining, stop accepting connections, let in-flight requests finish, run cleanups (close
 * pools, workers, Redis) and exit, with a deadline after which the process exits anyway.
 */
import type { RequestListener, Server } from 'node:http';
import { processSettings } from './config.js';
import { listenWhenFree } from './http/listen.js';
import { createHttpServer, type HttpServerOptions } from './http/server.js';
import type { Logger } from './logger.js';

/** How often a stopping server closes the connections that went idle since. */
const IDLE_SWEEP_MS = 50;

export class ProcessLifecycle {
  private drainingNow = false;
  private readonly cleanups: (() => Promise<unknown>)[] = [];
  private readonly servers: Server[] = [];

  constructor(
    private readonly logger: Logger,
    private readonly shutdownDeadlineMs = processSettings().SHUTDOWN_TIMEOUT_MS,
  ) {}

  readonly isDraining = (): boolean => this.drainingNow;

  /** Cleanups run in reverse order of registration (last opened, first closed). */
  onShutdown(cleanup: () => Promise<unknown>): void {
    this.cleanups.unshift(cleanup);
  }

  /** Resolves once listening; a taken port is logged and tried again until it is free. */
  async listen(app: RequestListener, port: number, options: HttpServerOptions = {}, host = processSettings().HOST): Promise<Server> {
    const server = createHttpServer(app, options);
    this.servers.push(server);
    await listenWhenFree(server, port, host, this.logger, 'service');
    return server;
  }

  async shutdown(reason: string): Promise<void> {
    if (this.drainingNow) return;
    this.drainingNow = true;
    this.logger.info({ reason }, 'shutting down');
    const deadline = setTimeout(() => {
      this.logger.error('shutdown deadline passed; exiting');
      process.exit(1);
    }, this.shutdownDeadlineMs);
    deadline.unref();
    // A keep-alive connection busy when the stop began stays open once its answer is sent, and
    // would hold its server open for the keep-alive timeout (65 s), past the deadline: each is
    // closed as soon as it is idle.
    const closeIdle = () => this.servers.forEach((server) => server.closeIdleConnections());
    const sweep = setInterval(closeIdle, IDLE_SWEEP_MS);
    await Promise.all(
      this.servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
          }),
      ),
    );
    clearInterval(sweep);
    for (const cleanup of this.cleanups) {
      try {
        await cleanup();
      } catch (error) {
        this.logger.warn({ err: error }, 'cleanup failed during shutdown');
      }
    }
    clearTimeout(deadline);
  }

  installSignalHandlers(): void {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        void this.shutdown(signal).then(() => process.exit(0));
      });
    }
  }
}

/** Runs an entry point, printing a configuration or boot failure readably before exiting. */
export function runMain(name: string, main: () => Promise<void>): void {
  main().catch((error: Error) => {
    console.error(`${name} failed to start: ${error.message}`);
    if (!(error.name === 'ConfigError')) console.error(error.stack);
    process.exit(1);
  });
}

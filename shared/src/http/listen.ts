/**
 * Binding a port that may be taken: by a process of the previous deployment still stopping, or by
 * another program. Every process binds its service and metrics ports through here, so that a taken
 * port is named in the log and tried again (with backoff) until it is free, instead of the process
 * exiting to be restarted forever, or running on without that port.
 */
import type { Server } from 'node:net';
import type { Logger } from '../logger.js';

/** The first retry waits this long, each further one twice as long, up to the maximum. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5000;

/**
 * Listens on `port` of `host`; while the port is taken (EADDRINUSE), logs it and tries again.
 * Resolves once listening; rejects on any other error, or when the server is closed meanwhile.
 */
export function listenWhenFree(server: Server, port: number, host: string, logger: Logger, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let failures = 0;
    let timer: NodeJS.Timeout | undefined;
    const attempt = () => {
      const onError = (error: NodeJS.ErrnoException) => {
        server.off('listening', onListening);
        if (error.code !== 'EADDRINUSE') {
          reject(error);
          return;
        }
        failures += 1;
        const retryInMs = Math.min(RETRY_FIRST_MS * 2 ** (failures - 1), RETRY_MAX_MS);
        logger.error({ port, retryInMs, attempt: failures }, `${what}: port ${port} is taken; trying again`);
        timer = setTimeout(attempt, retryInMs);
      };
      const onListening = () => {
        server.off('error', onError);
        resolve();
      };
      server.once('error', onError);
      server.once('listening', onListening);
      server.listen(port, host);
    };
    // A server closed while waiting (the process is stopping) stops trying.
    server.once('close', () => {
      clearTimeout(timer);
      reject(new Error(`${what}: closed before port ${port} was free`));
    });
    attempt();
  });
}

/** The one logger factory of every process: JSON lines (pino) with credentials redacted. */
import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/** Paths pino must never print: credentials in headers, bodies and config. */
export const LOG_REDACT_PATHS: readonly string[] = [
  'secret',
  '*.secret',
  'token',
  '*.token',
  'access_token',
  '*.access_token',
  'signed_app_token',
  '*.signed_app_token',
  'req.headers.authorization',
  'req.headers["x-collab-internal-token"]',
  'headers.authorization',
  'headers["x-collab-internal-token"]',
];

export function createLogger(service: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    base: { service },
    redact: { paths: [...LOG_REDACT_PATHS], censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

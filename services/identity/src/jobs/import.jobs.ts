/**
 * The identity-import queue: one job per import of a customer dump (its id is the import's). A job
 * that stops half-way (the worker killed, a service down) is retried and resumes where the import
 * recorded its progress; a dump the importer cannot read is not retried. The outcome is kept in the
 * import's record, read by `npm run import` and GET /v1/customer/imports/<importID>.
 */
import { ApiError, createInternalClient, DumpFormatError, importClient, type JobHandlers, type PendingJob, type SecretBox } from '@collab/shared';
import { UnrecoverableError } from 'bullmq';
import type { DataSource } from 'typeorm';
import { ImportRun, type ImportDeps } from '../domain/import/run-import.js';
import { importsRepository } from '../repositories/imports.repository.js';

/** Failures that another attempt cannot fix: the dump's content, or a service refusing a row. */
function isPermanent(error: unknown): boolean {
  return error instanceof DumpFormatError || error instanceof SyntaxError || (error instanceof ApiError && error.status < 500);
}

export function importJobs(deps: Omit<ImportDeps, 'logger'>): JobHandlers<'identity-import'> {
  return {
    'import.run': async ({ importId, requestId }, job, log) => {
      const record = await importsRepository.find(deps.db, importId);
      if (!record || record.state === 'completed' || record.state === 'failed') return { state: record?.state ?? 'unknown' };
      await importsRepository.start(deps.db, importId);
      try {
        await new ImportRun({ ...deps, logger: log }, { ...record, state: 'active' }, requestId).execute();
      } catch (error) {
        const message = (error as Error).message;
        const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
        if (isPermanent(error) || lastAttempt) {
          await importsRepository.finish(deps.db, importId, { state: 'failed', error: message });
          log.warn({ err: message }, 'import failed');
          throw new UnrecoverableError(message);
        }
        throw error;
      }
      await importsRepository.finish(deps.db, importId, { state: 'completed' });
      return { state: 'completed' };
    },
  };
}

/**
 * The identity worker's import handlers, calling the other services' import endpoints; `notices`
 * reach the gateways' credential caches and the services reusing identity's answers (as identity's API does).
 */
export function identityImportJobs(
  db: DataSource,
  config: { INTERNAL_TOKEN: string; CONVERSATION_URL: string; NOTIFICATION_URL: string; WEBHOOKS_URL: string; MAIL_URL: string },
  secretBox: SecretBox,
  notices: Pick<ImportDeps, 'publishInvalidation' | 'directoryChanged'>,
): JobHandlers<'identity-import'> {
  const client = (service: string, baseUrl: string) => createInternalClient({ baseUrl, internalToken: config.INTERNAL_TOKEN, service, timeoutMs: 60_000 });
  const services = importClient({
    conversation: client('conversation', config.CONVERSATION_URL),
    notification: client('notification', config.NOTIFICATION_URL),
    webhooks: client('webhooks', config.WEBHOOKS_URL),
    mail: client('mail', config.MAIL_URL),
  });
  return importJobs({ db, secretBox, services, ...notices });
}

/** Imports not finished, queued again (deduplicated by their id) when Redis lost or never took their job. */
export async function pendingImports(db: DataSource): Promise<PendingJob<'identity-import'>[]> {
  return (await importsRepository.unfinished(db)).map(({ id, customerId }) => ({
    name: 'import.run',
    data: { customerId, importId: id, requestId: `import-${id}` },
    key: `import-${id}`,
    jobId: id,
  }));
}

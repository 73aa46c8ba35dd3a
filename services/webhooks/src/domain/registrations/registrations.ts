/**
 * Webhooks an application registers for event types. A registration belongs to the application of
 * the token, whatever application id the path names (clients send whatever id they hold there).
 */
import { randomUUID } from 'node:crypto';
import { ApiError, isUuid, requireAllowedAddress, requireHttpUrl, type ViewAnswer, type webhookView } from '@collab/shared';
import type { DataSource } from 'typeorm';
import { registrationsRepository } from '../../repositories/registrations.repository.js';
import type { WebhooksContext } from '../context.js';

/** Registrations are named `cord:<uuid>` outside, the form clients already hold webhook ids in. */
const EXTERNAL_PREFIX = 'cord:';

export async function registerWebhook(ctx: Pick<WebhooksContext, 'db' | 'outbound'>, applicationId: string, input: { url: string; events: string[] }) {
  requireHttpUrl(input.url, 'url');
  await requireAllowedAddress(ctx.outbound, input.url, 'url');
  const id = await registrationsRepository.upsert(ctx.db, applicationId, randomUUID(), input.url, input.events);
  return `${EXTERNAL_PREFIX}${id}`;
}

export async function listWebhooks(db: DataSource, applicationId: string): Promise<ViewAnswer<typeof webhookView>[]> {
  const rows = await registrationsRepository.list(db, applicationId);
  return rows.map((row) => ({ id: `${EXTERNAL_PREFIX}${row.id}`, url: row.url, events: row.events }));
}

/** Deletes the caller's registration; answers the same whether or not one was deleted (idempotent). */
export async function deleteWebhook(db: DataSource, applicationId: string, webhookId: string): Promise<void> {
  const id = webhookId.startsWith(EXTERNAL_PREFIX) ? webhookId.slice(EXTERNAL_PREFIX.length) : '';
  if (!isUuid(id)) throw new ApiError('invalid_request', 'Invalid request.');
  await registrationsRepository.delete(db, applicationId, id.toLowerCase());
}

/**
 * Exporting a customer's data as a dump (GET /v1/customer/dbdump): identity writes the dump and
 * asks each service for its tables' rows, a page at a time (keyset: `after` is the last page's
 * `next`), already in the dump's columns and text form (dump/dump-writer.ts), so that every service
 * reads only its own tables and memory stays bounded whatever the size.
 */
import type { InternalClient } from '../http/internal-client.js';
import { s, type Infer } from '../schema/index.js';

const page = {
  request: s.object({ after: s.string().nullable(), limit: s.integer({ minimum: 1, maximum: 5000 }) }),
  response: s.object({ rows: s.array(s.unknown()), next: s.string().nullable() }),
};

export const exportInternal = {
  threads: { method: 'POST', path: '/internal/export/threads', ...page },
  messages: { method: 'POST', path: '/internal/export/messages', ...page },
  message_mentions: { method: 'POST', path: '/internal/export/message_mentions', ...page },
  message_reactions: { method: 'POST', path: '/internal/export/message_reactions', ...page },
  thread_participants: { method: 'POST', path: '/internal/export/thread_participants', ...page },
  files: { method: 'POST', path: '/internal/export/files', ...page },
  message_attachments: { method: 'POST', path: '/internal/export/message_attachments', ...page },
  pages: { method: 'POST', path: '/internal/export/pages', ...page },
  notifications: { method: 'POST', path: '/internal/export/notifications', ...page },
  application_webhooks: { method: 'POST', path: '/internal/export/application_webhooks', ...page },
  email_subscription: { method: 'POST', path: '/internal/export/email_subscription', ...page },
} as const;

export type ExportedKind = keyof typeof exportInternal;
export type ExportPage = Infer<typeof page.response>;
export type ExportRequest = Infer<typeof page.request>;

const OWNER: Record<ExportedKind, 'conversation' | 'notification' | 'webhooks' | 'mail'> = {
  threads: 'conversation',
  messages: 'conversation',
  message_mentions: 'conversation',
  message_reactions: 'conversation',
  thread_participants: 'conversation',
  files: 'conversation',
  message_attachments: 'conversation',
  pages: 'conversation',
  notifications: 'notification',
  application_webhooks: 'webhooks',
  email_subscription: 'mail',
};

export function exportClient(clients: Record<'conversation' | 'notification' | 'webhooks' | 'mail', InternalClient>) {
  return {
    async page(kind: ExportedKind, applicationId: string, request: ExportRequest, requestId: string): Promise<ExportPage> {
      const contract = exportInternal[kind];
      const answer = await clients[OWNER[kind]].call(contract.method, contract.path, { applicationId, requestId, body: request, timeoutMs: 60_000 });
      return contract.response.parse(answer);
    },
  };
}
export type ExportClient = ReturnType<typeof exportClient>;

/**
 * This service's part of exporting a customer dump: threads (with their locations as `pages`),
 * messages, reactions, mentions, participants, files (their rows: a dump holds no bytes) and
 * file attachments, in the original's columns. Ids are the derived
 * UUIDs every service computes alike (exportIds); mentions in content name users by theirs, as the
 * original stored them.
 */
import { exportIds, formatTimestamp, type ExportHandlers, type ExportRow } from '@collab/shared';
import { exportRepository } from '../../repositories/export.repository.js';
import type { ConversationContext } from '../context.js';

/** The content with each mention naming the user's dump UUID (the original's form). */
function withDumpMentions(content: unknown, applicationId: string): unknown {
  if (Array.isArray(content)) return content.map((node) => withDumpMentions(node, applicationId));
  if (content === null || typeof content !== 'object') return content;
  const record = { ...(content as Record<string, unknown>) };
  const user = record.user as { id?: unknown } | undefined;
  if (record.type === 'mention' && typeof user?.id === 'string') record.user = { ...user, id: exportIds.user(applicationId, user.id) };
  if (Array.isArray(record.children)) record.children = record.children.map((child) => withDumpMentions(child, applicationId));
  return record;
}

const bool = (value: boolean) => (value ? 't' : 'f');
const page = <T>(rows: T[], limit: number, cursor: (last: T) => string) => ({ next: rows.length === limit ? cursor(rows[rows.length - 1]) : null });

// Over 80 lines: a table of one short page reader per exported table, each read on its own.
export function exportHandlers(ctx: Pick<ConversationContext, 'db'>): ExportHandlers {
  return {
    threads: async (app, { after, limit }) => {
      const rows = await exportRepository.threads(ctx.db, app, after, limit);
      return {
        rows: rows.map(
          (row): ExportRow<'threads'> => ({
            id: exportIds.thread(app, row.ref),
            name: row.name,
            orgID: exportIds.group(app, row.groupId),
            resolvedTimestamp: formatTimestamp(row.resolvedAt),
            url: row.url,
            externalID: row.externalId,
            platformApplicationID: app,
            createdTimestamp: formatTimestamp(row.createdAt),
            pageContextHash: exportIds.page(app, row.groupId, row.location),
            metadata: row.metadata,
            extraClassnames: row.extraClassnames,
          }),
        ),
        ...page(rows, limit, (last) => last.ref),
      };
    },
    messages: async (app, { after, limit }) => {
      const rows = await exportRepository.messages(ctx.db, app, after, limit);
      return {
        rows: rows.map(
          (row): ExportRow<'messages'> => ({
            id: exportIds.message(app, row.ref),
            content: JSON.stringify(withDumpMentions(row.content, app)),
            sourceID: exportIds.user(app, row.authorId),
            orgID: exportIds.group(app, row.groupId),
            threadID: exportIds.thread(app, row.threadRef),
            timestamp: formatTimestamp(row.createdAt),
            url: row.url,
            deletedTimestamp: formatTimestamp(row.deletedAt),
            lastUpdatedTimestamp: formatTimestamp(row.updatedAt),
            type: row.type,
            externalID: row.externalId,
            platformApplicationID: app,
            iconURL: row.iconUrl,
            metadata: row.metadata,
            // The original's column is never NULL: '' when not set.
            extraClassnames: row.extraClassnames ?? '',
            translationKey: row.translationKey,
            skipLinkPreviews: bool(row.skipLinkPreviews),
          }),
        ),
        ...page(rows, limit, (last) => last.ref),
      };
    },
    message_reactions: async (app, { after, limit }) => {
      const rows = await exportRepository.reactions(ctx.db, app, after ? JSON.parse(after) : null, limit);
      return {
        rows: rows.map(
          (row): ExportRow<'message_reactions'> => ({
            id: exportIds.reaction(app, row.messageRef, row.userId, row.reaction),
            userID: exportIds.user(app, row.userId),
            messageID: exportIds.message(app, row.messageRef),
            timestamp: formatTimestamp(row.reactedAt),
            unicodeReaction: row.reaction,
          }),
        ),
        ...page(rows, limit, (last) => JSON.stringify([last.messageRef, last.userId, last.reaction])),
      };
    },
    message_mentions: async (app, { after, limit }) => {
      const rows = await exportRepository.mentions(ctx.db, app, after ? JSON.parse(after) : null, limit);
      return {
        rows: rows.map((row): ExportRow<'message_mentions'> => ({ userID: exportIds.user(app, row.userId), messageID: exportIds.message(app, row.messageRef) })),
        ...page(rows, limit, (last) => JSON.stringify([last.messageRef, last.userId])),
      };
    },
    thread_participants: async (app, { after, limit }) => {
      const rows = await exportRepository.participants(ctx.db, app, after, limit);
      return {
        rows: rows.map(
          (row): ExportRow<'thread_participants'> => ({
            threadID: exportIds.thread(app, row.threadRef),
            userID: exportIds.user(app, row.userId),
            orgID: exportIds.group(app, row.groupId),
            lastSeenTimestamp: formatTimestamp(row.lastSeenAt),
            subscribed: bool(row.subscribed),
          }),
        ),
        ...page(rows, limit, (last) => last.seq),
      };
    },
    files: async (app, { after, limit }) => {
      const rows = await exportRepository.files(ctx.db, app, after, limit);
      return {
        rows: rows.map(
          (row): ExportRow<'files'> => ({
            id: row.id,
            userID: exportIds.user(app, row.ownerId),
            mimeType: row.mimeType,
            timestamp: formatTimestamp(row.createdAt),
            name: row.name,
            size: row.size,
            uploadStatus: row.uploadStatus,
            platformApplicationID: app,
          }),
        ),
        ...page(rows, limit, (last) => last.id),
      };
    },
    message_attachments: async (app, { after, limit }) => {
      const rows = await exportRepository.attachments(ctx.db, app, after, limit);
      return {
        rows: rows.map(
          (row): ExportRow<'message_attachments'> => ({
            id: exportIds.attachment(app, row.messageRef, row.fileId),
            messageID: exportIds.message(app, row.messageRef),
            type: 'file',
            data: JSON.stringify({ fileID: row.fileId }),
            timestamp: formatTimestamp(row.createdAt),
          }),
        ),
        ...page(rows, limit, (last) => last.seq),
      };
    },
    pages: async (app, { after, limit }) => {
      const rows = await exportRepository.locations(ctx.db, app, after ? JSON.parse(after) : null, limit);
      return {
        rows: rows.map(
          (row): ExportRow<'pages'> => ({
            orgID: exportIds.group(app, row.groupId),
            contextData: row.location,
            contextHash: exportIds.page(app, row.groupId, row.location),
          }),
        ),
        ...page(rows, limit, (last) => JSON.stringify([last.groupId, last.location])),
      };
    },
  };
}

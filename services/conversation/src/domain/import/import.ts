/**
 * This service's part of importing a customer dump: threads, messages, reactions, mentions,
 * participants, files (with their bytes, when the dump's were given) and attachments, each batch
 * in one transaction. Answers the internal references of the threads
 * and messages given, keyed by the dump's ids, which the importer needs to name them later
 * (messages in reactions, both in notifications).
 */
import type { ImportHandlers } from '@collab/shared';
import { importRepository } from '../../repositories/import.repository.js';
import type { ConversationContext } from '../context.js';

/** The last row of each id wins, as one INSERT cannot write a row twice. */
function lastById<Row extends { id: string }>(rows: Row[]): Row[] {
  return [...new Map(rows.map((row) => [row.id, row])).values()];
}

function refsOf(rows: { id: string; originalId: string }[], stored: { externalId: string; ref: string }[]) {
  const byId = new Map(stored.map((row) => [row.externalId, row.ref]));
  return rows.flatMap((row) => (byId.has(row.id) ? [{ originalId: row.originalId, ref: byId.get(row.id)! }] : []));
}

export function importHandlers(ctx: Pick<ConversationContext, 'db'>): ImportHandlers {
  return {
    threads: async (applicationId, rows, overwrite) => {
      const { inserted, refs } = await ctx.db.transaction((tx) => importRepository.threads(tx, applicationId, lastById(rows), overwrite));
      return { inserted, refs: refsOf(rows, refs) };
    },
    messages: async (applicationId, rows, overwrite) => {
      const { inserted, refs } = await ctx.db.transaction((tx) => importRepository.messages(tx, applicationId, lastById(rows), overwrite));
      return { inserted, refs: refsOf(rows, refs) };
    },
    reactions: async (applicationId, rows, overwrite) => ({ inserted: await importRepository.reactions(ctx.db, applicationId, rows, overwrite) }),
    mentions: async (applicationId, rows) => ({ inserted: await importRepository.mentions(ctx.db, applicationId, rows) }),
    participants: async (applicationId, rows, overwrite) => ({ inserted: await importRepository.participants(ctx.db, applicationId, rows, overwrite) }),
    files: async (applicationId, rows, overwrite) => ({ inserted: await importRepository.files(ctx.db, applicationId, lastById(rows), overwrite) }),
    fileChunks: async (applicationId, rows) =>
      ctx.db.transaction(async (tx) => {
        let inserted = 0;
        for (const { fileID, seq, data, last } of rows)
          inserted += await importRepository.fileChunk(tx, applicationId, { fileID, seq, data: Buffer.from(data, 'base64'), last });
        return { inserted };
      }),
    attachments: async (applicationId, rows) => ({ inserted: await importRepository.attachments(ctx.db, applicationId, rows) }),
  };
}

/**
 * This service's part of importing a customer dump: threads, messages, reactions, mentions and
 * participants, each batch in one transaction. Answers the internal references of the threads
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
  };
}

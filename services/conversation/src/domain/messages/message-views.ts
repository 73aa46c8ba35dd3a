/** The message object of the API, built for many messages with one more query. */
import { messageView, plaintextOf, type MessageNode, type Queryable, type ViewAnswer } from '@collab/shared';
import type { MessageRow, ThreadRow } from '../../entities/index.js';
import { messageViewsRepository } from '../../repositories/message-views.repository.js';
import { messagesTable } from '../../repositories/tables.js';
import { signedFileUrl } from '../files/file-links.js';

export interface ViewOptions {
  /** Public base URL for file download links. */
  linkBase: string;
  fileUrlSecret: string;
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** Items by key, each group in the items' order. */
export function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const item of items) {
    const group = map.get(key(item));
    if (group) group.push(item);
    else map.set(key(item), [item]);
  }
  return map;
}

/**
 * The keys of the message answer named as a column: each is answered as its column stores it
 * unless messageViews builds it itself, so that a column added with a key of its name in the
 * answer's schema (`messageView`) is answered without an edit here.
 */
const STORED_KEYS = Object.keys(messageView.shape).filter((key) => Object.hasOwn(messagesTable.columns, key)) as (keyof MessageRow)[];

export async function messageViews(
  db: Queryable,
  rows: readonly MessageRow[],
  threads: Map<string, ThreadRow>,
  options: ViewOptions,
): Promise<ViewAnswer<typeof messageView>[]> {
  const { reactions, attachments, previews, participants } = await messageViewsRepository.detailsOf(
    db,
    rows.map((row) => row.internalId),
    rows.map((row) => row.threadRef),
  );
  const reactionsByMessage = groupBy(reactions, (reaction) => reaction.messageRef);
  const attachmentsByMessage = groupBy(attachments, (file) => file.messageRef);
  const previewsByMessage = groupBy(previews, (preview) => preview.messageRef);
  const participantsByThread = groupBy(participants, (participant) => participant.threadRef);

  return rows.map((row) => {
    const thread = threads.get(row.threadRef)!;
    const seenAfter = (row.updatedAt ?? row.createdAt).getTime();
    const answer = {
      id: row.externalId,
      authorID: row.authorId,
      organizationID: thread.groupId,
      groupID: thread.groupId,
      threadID: thread.externalId,
      content: row.content as MessageNode[],
      plaintext: plaintextOf(row.content as MessageNode[]),
      url: row.url ?? thread.url,
      createdTimestamp: row.createdAt.toISOString(),
      updatedTimestamp: iso(row.updatedAt),
      deletedTimestamp: iso(row.deletedAt),
      type: row.type,
      iconURL: row.iconUrl,
      translationKey: row.translationKey,
      metadata: row.metadata,
      extraClassnames: row.extraClassnames,
      skipLinkPreviews: row.skipLinkPreviews,
      attachments: [
        ...(attachmentsByMessage.get(row.internalId) ?? []).map((file) => ({
          type: 'file' as const,
          id: `cord:${file.id}`,
          name: file.name,
          url: signedFileUrl(options.linkBase, options.fileUrlSecret, file.id),
          mimeType: file.mimeType,
          size: Number(file.size),
          uploadStatus: file.uploadStatus,
        })),
        ...(previewsByMessage.get(row.internalId) ?? []).map((preview) => ({
          type: 'link_preview' as const,
          id: preview.id,
          url: preview.url,
          imageURL: preview.imageUrl,
          title: preview.title,
          description: preview.description,
        })),
      ],
      reactions: (reactionsByMessage.get(row.internalId) ?? []).map((reaction) => ({
        reaction: reaction.reaction,
        userID: reaction.userId,
        timestamp: reaction.reactedAt.toISOString(),
      })),
      seenBy: (participantsByThread.get(row.threadRef) ?? [])
        .filter((participant) => participant.lastSeenAt !== null && participant.lastSeenAt.getTime() >= seenAfter)
        .map((participant) => participant.userId),
    };
    for (const key of STORED_KEYS) if (!Object.hasOwn(answer, key)) (answer as Record<string, unknown>)[key] = row[key];
    return answer;
  });
}

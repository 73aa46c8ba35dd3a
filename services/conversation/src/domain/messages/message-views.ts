/** The message object of the API (behavior.md §12.1), built for many messages with a few queries. */
import { plaintextOf, type MessageNode } from '@collab/shared';
import type { MessageRow, ParticipantRow, ThreadRow } from '../../entities/index.js';
import type { Db } from '../../repositories/db.js';
import { messagesRepository } from '../../repositories/messages.repository.js';
import { participantsRepository } from '../../repositories/participants.repository.js';
import { signedFileUrl } from '../files/file-links.js';

export interface ViewOptions {
  /** Public base URL for file download links. */
  linkBase: string;
  fileUrlSecret: string;
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);

export async function messageViews(db: Db, rows: readonly MessageRow[], threads: Map<string, ThreadRow>, options: ViewOptions) {
  const messageIds = rows.map((row) => row.internalId);
  const [reactions, attachments, previews, participants] = await Promise.all([
    messagesRepository.reactionsOf(db, messageIds),
    messagesRepository.attachmentsOf(db, messageIds),
    messagesRepository.linkPreviewsOf(db, messageIds),
    participantsRepository.ofThreads(db, [...new Set(rows.map((row) => row.threadId))]),
  ]);
  const byMessage = <T extends { messageId: string }>(items: T[]) => {
    const map = new Map<string, T[]>();
    for (const item of items) map.set(item.messageId, [...(map.get(item.messageId) ?? []), item]);
    return map;
  };
  const reactionsByMessage = byMessage(reactions);
  const attachmentsByMessage = byMessage(attachments);
  const previewsByMessage = byMessage(previews);
  const participantsByThread = new Map<string, ParticipantRow[]>();
  for (const participant of participants)
    participantsByThread.set(participant.threadId, [...(participantsByThread.get(participant.threadId) ?? []), participant]);

  return rows.map((row) => {
    const thread = threads.get(row.threadId)!;
    const seenAfter = (row.updatedAt ?? row.createdAt).getTime();
    return {
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
          uploadStatus: 'uploaded' as const,
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
      seenBy: (participantsByThread.get(row.threadId) ?? [])
        .filter((participant) => participant.lastSeenAt !== null && participant.lastSeenAt.getTime() >= seenAfter)
        .map((participant) => participant.userId),
    };
  });
}

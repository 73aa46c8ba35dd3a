/**
 * The message object of the API. PostgreSQL writes it as JSON text (message-views.repository.ts);
 * this joins its parts with what only Node computes: the plaintext and the signed file links.
 * Lists pass the text on as it is; callers that need an object parse it.
 */
import { plaintextOf, type MessageNode, type messageView, type Queryable, type ViewAnswer } from '@collab/shared';
import type { MessageRef, ThreadRef } from '../../entities/index.js';
import { messageViewsRepository, type MessageViewParts } from '../../repositories/message-views.repository.js';
import { signedFileUrl } from '../files/file-links.js';

export interface ViewOptions {
  /** Public base URL for file download links. */
  linkBase: string;
  fileUrlSecret: string;
}

export type MessageAnswer = ViewAnswer<typeof messageView>;

/** One message's answer as JSON text, its keys in the order of `messageView`. */
function answerText(parts: MessageViewParts, options: ViewOptions): string {
  const files = (parts.files ?? []).map((file) =>
    JSON.stringify({
      type: 'file',
      id: `cord:${file.id}`,
      name: file.name,
      url: signedFileUrl(options.linkBase, options.fileUrlSecret, file.id),
      mimeType: file.mimeType,
      size: Number(file.size),
      uploadStatus: file.uploadStatus,
    }),
  );
  // Files first, then the link previews (a JSON array, `[]` when there are none).
  const previews = parts.previews.slice(1, -1).trim();
  const attachments = files.length === 0 ? parts.previews : `[${[...files, ...(previews ? [previews] : [])].join(',')}]`;
  const plaintext = JSON.stringify(plaintextOf(parts.content as MessageNode[]));
  return `${parts.head.slice(0, -1)},"plaintext":${plaintext},${parts.middle.slice(1, -1)},"attachments":${attachments},${parts.tail.slice(1)}`;
}

/** The answers of a thread's messages, oldest or newest first, as a JSON array. */
export async function threadMessagesText(
  db: Queryable,
  applicationId: string,
  thread: ThreadRef,
  direction: 'ascending' | 'descending',
  options: ViewOptions,
): Promise<string> {
  const parts = await messageViewsRepository.inThread(db, applicationId, thread, direction);
  return `[${parts.map((message) => answerText(message, options)).join(',')}]`;
}

/** The answers of these messages, in this order, as JSON texts. */
export async function messageViewTexts(
  db: Queryable,
  applicationId: string,
  messages: readonly MessageRef[],
  options: ViewOptions,
): Promise<string[]> {
  const parts = await messageViewsRepository.ofMessages(db, applicationId, messages);
  return parts.map((message) => answerText(message, options));
}

/** The answers of these messages, in this order, as objects (for events, notifications and client views). */
export async function messageViews(
  db: Queryable,
  applicationId: string,
  messages: readonly MessageRef[],
  options: ViewOptions,
): Promise<MessageAnswer[]> {
  return (await messageViewTexts(db, applicationId, messages, options)).map((text) => JSON.parse(text) as MessageAnswer);
}

/** The checks and helpers the message use cases share. */
import { ApiError, checkContentStructure, isUuid, mentionedUserIds, type MessageNode, type Queryable, isUniqueViolation } from '@collab/shared';
import type { ThreadRow } from '../../entities/index.js';
import { filesRepository } from '../../repositories/files.repository.js';
import { messagesRepository } from '../../repositories/messages.repository.js';
import type { Lookup } from '../identity-directory.js';
import type { MessageCreationInput } from './message-keys.js';

/** A reaction as a message's create and update add it. */
type ReactionInput = NonNullable<MessageCreationInput['addReactions']>[number];

/** The unique constraint a write violated, or null (pg error, possibly wrapped by TypeORM). */
export function violatedConstraint(error: unknown): string | null {
  if (!isUniqueViolation(error)) return null;
  const wrapped = error as { constraint?: string; driverError?: { constraint?: string } };
  return wrapped.constraint ?? wrapped.driverError?.constraint ?? '';
}
export const MESSAGE_ID_CONSTRAINT = 'messages_application_external_id_key';

function messageNotFound(messageId: string): ApiError {
  return new ApiError('message_not_found', `Could not find message with ID ${messageId}`);
}

/** A file id as clients send it back: `cord:<uuid>` (what we return) or the bare uuid. */
export function bareFileId(id: string): string {
  return id.startsWith('cord:') ? id.slice('cord:'.length) : id;
}

/** The content check: structure first, then mentioned users must exist (in any group, with any status). */
export function checkMentions(lookup: Lookup, content: readonly MessageNode[]): string[] {
  checkContentStructure(content);
  const mentioned = mentionedUserIds(content);
  const unknown = mentioned.find((id) => !lookup.users.has(id));
  if (unknown !== undefined) throw new ApiError('invalid_field', `content field is invalid: Could not find mentioned user with ID ${unknown}`);
  return mentioned;
}

/**
 * Reaction users must exist (else 401 user_not_found) and be active members of the thread's group
 * (else 401 user_not_in_organization); a failed check applies nothing of the request.
 */
export function checkReactionUsers(lookup: Lookup, groupId: string, userIds: readonly string[]): void {
  for (const userId of userIds) {
    const user = lookup.users.get(userId);
    if (!user) throw new ApiError('user_not_found', `User with ID ${userId} does not exist.`);
    if (!lookup.isMember(userId) || user.status !== 'active')
      throw new ApiError('user_not_in_organization', `User with ID '${userId}' does not belong in organization ${groupId}.`);
  }
}

/**
 * A reaction is at most 127 UTF-16 code units; the schema counts code points,
 * so an emoji-only reaction can pass it at twice the length.
 */
export function checkReactionLengths(items: readonly ReactionInput[]): void {
  if (items.some((item) => item.reaction.length > MAX_REACTION_LENGTH))
    throw new ApiError('invalid_field', `Reaction is too long, must be less than ${MAX_REACTION_LENGTH} characters`);
}
const MAX_REACTION_LENGTH = 127;

/** Equal JSON values, whatever the order of object keys (stored content comes back from jsonb reordered). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b))
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, index) => sameJson(item, b[index]));
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    const keysA = Object.keys(a);
    const keysB = Object.keys(b);
    return (
      keysA.length === keysB.length &&
      keysA.every((key) => Object.hasOwn(b, key) && sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
    );
  }
  return a === b;
}

/** Files to attach: no duplicates, all uploaded, all owned by the author. */
export async function checkAttachments(db: Queryable, applicationId: string, authorId: string, items: readonly { id: string }[]): Promise<string[]> {
  // UUIDs compare case-insensitively: `cord:<uuid>`, the bare UUID and its upper-case form are one file.
  const ids = items.map((item) => bareFileId(item.id).toLowerCase());
  if (new Set(ids).size !== ids.length) throw new ApiError('invalid_field', 'Cannot attach the same file multiple times');
  const files = await filesRepository.findMany(db, applicationId, ids.filter(isUuid));
  for (const id of ids) {
    const file = files.find((candidate) => candidate.id === id);
    if (!file) throw new ApiError('file_not_found', `File ${id} not found.`);
    if (file.ownerId !== authorId) throw new ApiError('file_belongs_to_different_user');
  }
  return ids;
}

/** Reactions as the repository stores them: a reaction without a timestamp is dated now. */
export function reactionRows(items: readonly ReactionInput[], now: Date) {
  return items.map((item) => ({
    userId: item.userID,
    reaction: item.reaction,
    at: item.timestamp ?? now,
    explicitTime: item.timestamp !== undefined,
  }));
}

/** The message of that thread, or 404 message_not_found (also when it is in another thread). */
export async function requireMessageInThread(db: Queryable, applicationId: string, thread: ThreadRow, messageId: string, forUpdate = false) {
  const message = await messagesRepository.find(db, applicationId, messageId, forUpdate);
  if (!message || message.threadRef !== thread.internalId) throw messageNotFound(messageId);
  return message;
}

/** Notification use cases (api.md "Notifications", decisions.md 2, 15, 33, 43; behavior.md §14). */
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  listWords,
  notificationRoutes,
  pageCursors,
  plural,
  s,
  StringSchema,
  type ConversationDirectory,
  type CursorOf,
  type RecordWrite,
  type FlatJson,
  type IdentityDirectory,
  type Path,
} from '@collab/shared';
import type { DataSource } from 'typeorm';
import { notificationsRepository } from '../../repositories/notifications.repository.js';
import { createdEntries, eventsOutbox } from '../events/outbox.js';
import { PLACEHOLDER, renderItems, visibilityOf } from './items.js';

export interface NotificationContext {
  db: DataSource;
  identity: IdentityDirectory;
  /** Where the messages and threads of activity notifications are asked. */
  conversation: ConversationDirectory;
}

export interface NotificationInput {
  actor_id?: string;
  actorID?: string;
  recipient_id?: string;
  recipientID?: string;
  template: string;
  url: string;
  type: 'url';
  iconUrl?: string | null;
  metadata?: FlatJson;
  extraClassnames?: string | null;
}

function hasActorPlaceholder(template: string): boolean {
  return [...template.matchAll(PLACEHOLDER)].some((match) => match[1] === 'actor');
}

const INVALID_TEMPLATE = 'Invalid template: must contain {{actor}} variable';

/** `template`: a string with at least one `{{actor}}` (api.md), checked in its place among the keys. */
class TemplateSchema extends StringSchema {
  override parse(value: unknown, path: Path = []): string {
    const template = super.parse(value, path);
    if (!hasActorPlaceholder(template)) throw new ApiError('invalid_field', INVALID_TEMPLATE);
    return template;
  }
}

/**
 * The route's body with the template rule inside the schema, so that the first invalid or
 * unexpected key in body order decides the error (behavior.md §5.2).
 */
export const notificationBody = s.object({ ...notificationRoutes.createNotification.body.shape, template: new TemplateSchema() });

/** Required keys that may be sent under either spelling (behavior.md §14.1, decisions.md 15). */
const ALIASED_REQUIRED: Record<string, string> = { actor_id: 'actorID', recipient_id: 'recipientID' };
const ALIASES = new Set(Object.values(ALIASED_REQUIRED));

/**
 * Every missing required key at once, before any key is checked for its value (behavior.md §5.2),
 * counting `actor_id`/`recipient_id` as present when their camelCase alias is. The body schema
 * cannot do this on its own because it declares both spellings optional.
 */
export function requireFields(body: Record<string, unknown>): void {
  const required = new Set(notificationBody.requiredKeys);
  const missing = Object.keys(notificationBody.shape).filter((key) => {
    if (ALIASES.has(key)) return false;
    if (key in ALIASED_REQUIRED) return !Object.hasOwn(body, key) && !Object.hasOwn(body, ALIASED_REQUIRED[key]);
    return required.has(key) && !Object.hasOwn(body, key);
  });
  if (missing.length > 0)
    throw new ApiError('missing_field', `Missing required ${plural(missing.length, 'field')}: ${listWords(missing)}.`);
}

/**
 * Stores the notification and, in the same transaction, its `notification-created` event.
 * `linkBase`: the public base URL the client called.
 */
export async function createNotification(
  ctx: NotificationContext,
  applicationId: string,
  input: NotificationInput,
  options: { requestId: string; linkBase: string; recordWrite: RecordWrite<string> },
): Promise<string> {
  const { requestId, linkBase } = options;
  // The snake_case keys are the documented ones; their camelCase aliases win when both are sent.
  const actorId = input.actorID ?? input.actor_id;
  const recipientId = input.recipientID ?? input.recipient_id;
  const missing = [...(actorId === undefined ? ['actor_id'] : []), ...(recipientId === undefined ? ['recipient_id'] : [])];
  if (missing.length > 0)
    throw new ApiError('missing_field', `Missing required ${plural(missing.length, 'field')}: ${listWords(missing)}.`);
  if (!hasActorPlaceholder(input.template)) throw new ApiError('invalid_field', INVALID_TEMPLATE);
  const { users } = await ctx.identity.lookup(applicationId, { userIds: [actorId!, recipientId!] }, requestId);
  if (!users.has(actorId!)) throw new ApiError('user_not_found', `Invalid actor user id: ${actorId}.`);
  if (!users.has(recipientId!)) throw new ApiError('user_not_found', `Invalid recipient user id: ${recipientId}.`);

  const id = `cord:${randomUUID()}`;
  await ctx.db.transaction(async (tx) => {
    const inserted = await notificationsRepository.insert(tx, applicationId, [
      {
        externalId: id,
        kind: 'external',
        recipientId: recipientId!,
        actorId: actorId!,
        template: input.template,
        url: input.url,
        iconUrl: input.iconUrl ?? null,
        extraClassnames: input.extraClassnames ?? null,
        metadata: input.metadata ?? {},
      },
    ]);
    await eventsOutbox.record(tx, createdEntries(applicationId, requestId, inserted, linkBase));
    // The request's answer, stored with the notification (Idempotency-Key).
    await options.recordWrite(tx, id);
  });
  return id;
}

/**
 * GET /v1/users/<ID>/notifications: the items the recipient sees, newest first (behavior.md
 * §14.3, decisions.md 33, 43). Only shown notifications count in the total and fill the pages.
 */
export async function listNotifications(
  ctx: NotificationContext,
  applicationId: string,
  userId: string,
  page: { limit: number; token: CursorOf<typeof pageCursors.notifications> | null },
  linkBase: string,
  requestId: string,
) {
  const recipient = await ctx.identity.lookup(applicationId, { userIds: [userId] }, requestId);
  if (!recipient.users.has(userId)) throw new ApiError('user_not_found', `Platform user ${userId} not found.`);
  const messageRefs = await notificationsRepository.messageRefsOf(ctx.db, applicationId, userId);
  const visibility = await visibilityOf(ctx, applicationId, messageRefs, requestId);
  const after = page.token ? { createdAtMicros: page.token.createdAtWithMicros, externalId: page.token.externalID } : null;
  const [{ rows, token }, total] = await Promise.all([
    pageCursors.notifications.page(
      page.limit,
      (limit) => notificationsRepository.itemsPage(ctx.db, applicationId, userId, visibility, { after, limit }),
      (last) => ({ externalID: last.externalId, createdAtWithMicros: last.cursor }),
    ),
    notificationsRepository.countItems(ctx.db, applicationId, userId, visibility),
  ]);
  return { notifications: await renderItems(ctx, applicationId, rows, linkBase, requestId), pagination: { token, total } };
}

/** Deletes the notification; a reaction's goes with the others shown in the same item. */
export async function deleteNotification(ctx: NotificationContext, applicationId: string, notificationId: string) {
  if (!(await notificationsRepository.delete(ctx.db, applicationId, notificationId)))
    throw new ApiError('not_found', `Notification ${notificationId} not found.`);
}

/** Notification use cases (api.md "Notifications", decisions.md 2, 15, 33; behavior.md §14). */
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  listWords,
  notificationRoutes,
  pageCursors,
  plural,
  s,
  StringSchema,
  type CursorOf,
  type DirectoryUser,
  type FlatJson,
  type IdentityDirectory,
  type Path,
} from '@collab/shared';
import type { DataSource } from 'typeorm';
import type { NotificationRow } from '../../entities/index.js';
import { notificationsRepository } from '../../repositories/notifications.repository.js';

export interface NotificationContext {
  db: DataSource;
  identity: IdentityDirectory;
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

/** `{{actor}}` and `{{recipient}}`, with optional spaces inside the braces (behavior.md §14.2). */
const PLACEHOLDER = /\{\{\s*(actor|recipient)\s*\}\}/g;

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

function nameOf(user: DirectoryUser | undefined, id: string): string {
  return user?.name ?? user?.shortName ?? id;
}

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

export async function createNotification(
  ctx: NotificationContext,
  applicationId: string,
  input: NotificationInput,
  requestId: string,
): Promise<string> {
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
  await notificationsRepository.insert(ctx.db, {
    applicationId,
    externalId: id,
    recipientId: recipientId!,
    actorId: actorId!,
    template: input.template,
    url: input.url,
    iconUrl: input.iconUrl ?? null,
    extraClassnames: input.extraClassnames ?? null,
    metadata: input.metadata ?? {},
  });
  return id;
}

/** The notification as the recipient sees it (behavior.md §14.3, decisions.md 33). */
function notificationView(row: NotificationRow, users: Map<string, DirectoryUser>) {
  const ids = { actor: row.actorId, recipient: row.recipientId };
  const header: unknown[] = [];
  let text = '';
  let last = 0;
  for (const match of row.template.matchAll(PLACEHOLDER)) {
    const literal = row.template.slice(last, match.index);
    if (literal) header.push({ type: 'text', text: literal, bold: false });
    const userId = ids[match[1] as 'actor' | 'recipient'];
    const user = users.get(userId);
    header.push({ type: 'user', userID: userId, user: { id: userId, name: user?.name ?? null, shortName: user?.shortName ?? null } });
    text += literal + nameOf(user, userId);
    last = match.index + match[0].length;
  }
  const rest = row.template.slice(last);
  if (rest) header.push({ type: 'text', text: rest, bold: false });
  text += rest;
  return {
    id: row.externalId,
    senderUserIDs: [row.actorId],
    iconUrl: row.iconUrl,
    header,
    headerTranslation: null,
    attachment: { type: 'url' as const, url: row.url },
    readStatus: row.readStatus,
    timestamp: row.createdAt.toISOString(),
    extraClassnames: row.extraClassnames,
    metadata: row.metadata,
    text,
  };
}

export async function listNotifications(
  ctx: NotificationContext,
  applicationId: string,
  userId: string,
  page: { limit: number; token: CursorOf<typeof pageCursors.notifications> | null },
  requestId: string,
) {
  const recipient = await ctx.identity.lookup(applicationId, { userIds: [userId] }, requestId);
  if (!recipient.users.has(userId)) throw new ApiError('user_not_found', `Platform user ${userId} not found.`);
  const after = page.token ? { createdAtMicros: page.token.createdAtWithMicros, externalId: page.token.externalID } : null;
  const [{ rows, token }, total] = await Promise.all([
    pageCursors.notifications.page(
      page.limit,
      (limit) => notificationsRepository.pageForRecipient(ctx.db, applicationId, userId, { after, limit }),
      (last) => ({ externalID: last.externalId, createdAtWithMicros: last.cursor }),
    ),
    notificationsRepository.countForRecipient(ctx.db, applicationId, userId),
  ]);
  const actors = [...new Set(rows.flatMap((row) => [row.actorId, row.recipientId]))];
  const { users } = actors.length > 0 ? await ctx.identity.lookup(applicationId, { userIds: actors }, requestId) : recipient;
  return { notifications: rows.map((row) => notificationView(row, users)), pagination: { token, total } };
}

export async function deleteNotification(ctx: NotificationContext, applicationId: string, notificationId: string) {
  if (!(await notificationsRepository.delete(ctx.db, applicationId, notificationId)))
    throw new ApiError('not_found', `Notification ${notificationId} not found.`);
}

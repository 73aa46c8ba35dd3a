/**
 * What becomes of each table of the original service's customer dump: imported by which service,
 * or skipped and why (reported in the import's summary). The original's columns are renamed to
 * this server's fields here (screenName → shortName, state `inactive` → `deleted`, timestamp →
 * createdTimestamp …), the pure part of the import.
 */
import { parseBoolean, parseTextArray, parseTimestamp, REPLY_ACTIONS, type ImportRow, type ReplyAction } from '@collab/shared';
import type { ImportedGroup, ImportedUser } from '../../repositories/imports.repository.js';

export type DumpRow = Record<string, string | null>;

/** The row, where a column the dump does not have (an older server's dump) reads as NULL. */
export function withMissingAsNull(row: DumpRow): DumpRow {
  return new Proxy(row, { get: (target, column) => (typeof column === 'string' ? (target[column] ?? null) : undefined) });
}

/** Tables this server holds nothing of, by why (the summary names the reason). */
const SKIPPED: Record<string, string> = {
  tasks: 'tasks (the original task feature) are not held by this server',
  task_todos: 'tasks (the original task feature) are not held by this server',
  task_assignees: 'tasks (the original task feature) are not held by this server',
  task_third_party_references: 'tasks (the original task feature) are not held by this server',
  task_third_party_subscriptions: 'tasks (the original task feature) are not held by this server',
  third_party_connections: 'task integrations are not held by this server',
  slack_messages: 'Slack data is not held by this server',
  slack_mirrored_threads: 'Slack data is not held by this server',
  slack_mirrored_support_threads: 'Slack data is not held by this server',
  linked_users: 'Slack data (linked profiles) is not held by this server',
  linked_orgs: 'Slack data (linked workspaces) is not held by this server',
  console_users: 'console users (people of the console account) are not held by this server',
  message_notifications: 'e-mail records (links of notification e-mails) are not held by this server',
  page_visitors: 'presence is not kept by this server',
  user_hidden_annotations: 'annotations are not held by this server',
  heimdall: 'feature flags of the original service',
  application_usage_metric_types: 'usage metrics of the original service',
  preallocated_thread_ids: 'preallocated thread ids are not needed by this server',
  message_link_previews: 'link previews are fetched again by this server when messages are edited',
};

/** The tables imported, in the order of the dump (which puts what rows refer to first). */
const IMPORTED = [
  'customers',
  'applications',
  'users',
  'orgs',
  'threads',
  'messages',
  'message_mentions',
  'message_reactions',
  'notifications',
  'org_members',
  'pages',
  'thread_participants',
  'application_webhooks',
  'email_subscription',
  'files',
  'message_attachments',
  'user_preferences',
] as const;
export type ImportedTable = (typeof IMPORTED)[number];
export const IMPORTED_TABLES: ReadonlySet<string> = new Set(IMPORTED);

/** Why a table's rows are not imported, or null when they are. */
export function skipReason(table: string): string | null {
  if (IMPORTED_TABLES.has(table)) return null;
  return SKIPPED[table] ?? 'not held by this server';
}

const required = (row: DumpRow, column: string): string => {
  const value = row[column];
  if (value === null || value === undefined) throw new Error(`column ${column} is NULL or missing`);
  return value;
};
const json = (value: string | null): unknown => (value === null ? null : JSON.parse(value));
const date = (value: string | null) => parseTimestamp(value);
const requiredDate = (row: DumpRow, column: string) => parseTimestamp(required(row, column))!;

export function userOf(row: DumpRow, applicationId: string): ImportedUser {
  return {
    applicationId,
    id: required(row, 'externalID'),
    name: row.name,
    email: row.email,
    shortName: row.screenName,
    profilePictureURL: row.profilePictureURL,
    status: row.state === 'deleted' ? 'deleted' : 'active',
    metadata: json(row.metadata) ?? {},
    createdTimestamp: requiredDate(row, 'createdTimestamp'),
  };
}

/** A group: the original says `inactive` for what the API calls status `deleted`. */
export function groupOf(row: DumpRow, applicationId: string): ImportedGroup {
  return {
    applicationId,
    id: required(row, 'externalID'),
    name: row.name ?? '',
    status: row.state === 'inactive' ? 'deleted' : 'active',
    metadata: json(row.metadata) ?? {},
    createdTimestamp: requiredDate(row, 'createdTimestamp'),
  };
}

export function threadOf(row: DumpRow, groupId: string, location: unknown): ImportRow<'threads'> {
  return {
    originalId: required(row, 'id'),
    id: required(row, 'externalID'),
    groupID: groupId,
    name: row.name ?? '',
    url: row.url ?? '',
    location: location ?? {},
    metadata: json(row.metadata) ?? {},
    extraClassnames: row.extraClassnames,
    resolvedTimestamp: date(row.resolvedTimestamp),
    createdTimestamp: requiredDate(row, 'createdTimestamp'),
  };
}

/** The user ids a message's content names in mention nodes (the original's internal ids), nested ones included. */
export function mentionedIds(content: unknown): string[] {
  const ids: string[] = [];
  const visit = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    const user = record.user as { id?: unknown } | undefined;
    if (record.type === 'mention' && typeof user?.id === 'string') ids.push(user.id);
    if (Array.isArray(record.children)) record.children.forEach(visit);
  };
  visit(content);
  return ids;
}

/**
 * The content with each mention naming the customer's user id instead of the original's internal
 * one (the original converted them on every read). Assignee nodes already hold the customer's id.
 */
export function withCustomerMentions(content: unknown, userIds: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(content)) return content.map((node) => withCustomerMentions(node, userIds));
  if (content === null || typeof content !== 'object') return content;
  const record = { ...(content as Record<string, unknown>) };
  const user = record.user as { id?: unknown } | undefined;
  if (record.type === 'mention' && typeof user?.id === 'string' && userIds.has(user.id)) record.user = { ...user, id: userIds.get(user.id) };
  if (Array.isArray(record.children)) record.children = record.children.map((child) => withCustomerMentions(child, userIds));
  return record;
}

/** A message; `content` is its content column already parsed (the importer reads the mentions in it first). */
export function messageOf(row: DumpRow, content: unknown, threadRef: string, authorId: string, userIds: ReadonlyMap<string, string>): ImportRow<'messages'> {
  return {
    originalId: required(row, 'id'),
    id: required(row, 'externalID'),
    threadRef,
    authorID: authorId,
    type: row.type === 'action_message' ? 'action_message' : 'user_message',
    content: withCustomerMentions(content ?? [], userIds),
    url: row.url,
    iconURL: row.iconURL,
    translationKey: row.translationKey,
    // The original stores '' for "never set"; this server says null.
    extraClassnames: row.extraClassnames === '' ? null : row.extraClassnames,
    metadata: json(row.metadata) ?? {},
    skipLinkPreviews: parseBoolean(row.skipLinkPreviews) ?? false,
    createdTimestamp: requiredDate(row, 'timestamp'),
    updatedTimestamp: date(row.lastUpdatedTimestamp),
    deletedTimestamp: date(row.deletedTimestamp),
  };
}

/**
 * The status a file of the dump is imported with, or why it is a failed upload: only a file the
 * original had whole, and whose bytes were given with the same size, is uploaded here (its bytes
 * follow it as `uploading`); an upload the original never completed stays failed (or cancelled).
 */
export function fileStatus(
  row: DumpRow,
  blobs: { given: boolean; size: number | undefined },
): { uploadStatus: 'uploading' | 'failed' | 'cancelled'; failure: string | null } {
  if (row.uploadStatus === 'cancelled') return { uploadStatus: 'cancelled', failure: null };
  if (row.uploadStatus !== 'uploaded') return { uploadStatus: 'failed', failure: null };
  if (!blobs.given) return { uploadStatus: 'failed', failure: 'imported as failed uploads: no file blobs were given (npm run import -- <dump> --files DIR)' };
  const id = required(row, 'id');
  if (blobs.size === undefined) return { uploadStatus: 'failed', failure: `imported as a failed upload: no blob ${id} in the files directory` };
  if (blobs.size !== Number(row.size)) return { uploadStatus: 'failed', failure: `imported as a failed upload: blob ${id} has ${blobs.size} bytes, the dump says ${row.size}` };
  return { uploadStatus: 'uploading', failure: null };
}

/** The file a message attachment of the original holds (`{"fileID": …}` in its data), or null. */
export function attachedFileId(row: DumpRow): string | null {
  if (row.type !== 'file') return null;
  const data = json(row.data) as { fileID?: unknown } | null;
  return typeof data?.fileID === 'string' ? data.fileID.toLowerCase() : null;
}

const KINDS = new Set(['external', 'reply', 'thread_action', 'reaction']);

/** A notification, or the reason it cannot be imported. */
export function notificationOf(
  row: DumpRow,
  refs: { recipientId: string; actorId: string; messageRef: string | null; threadRef: string | null; reaction: string | null },
): ImportRow<'notifications'> | string {
  const kind = row.type ?? '';
  if (!KINDS.has(kind)) return `notification type ${kind} is not held by this server`;
  if (kind !== 'external' && (!refs.messageRef || !refs.threadRef)) return 'its message or thread is not in the dump';
  if (kind === 'reaction' && !refs.reaction) return 'its reaction is not in the dump';
  const replyActions =
    kind === 'reply' ? (parseTextArray(row.replyActions) ?? []).filter((action): action is ReplyAction => REPLY_ACTIONS.includes(action as ReplyAction)) : null;
  return {
    originalId: required(row, 'id'),
    id: row.externalID ?? `cord:${required(row, 'id')}`,
    kind: kind as ImportRow<'notifications'>['kind'],
    recipientID: refs.recipientId,
    actorID: refs.actorId,
    template: kind === 'external' ? row.externalTemplate : null,
    url: kind === 'external' ? row.externalURL : null,
    iconUrl: row.iconUrl,
    extraClassnames: row.extraClassnames,
    metadata: json(row.metadata) ?? {},
    readStatus: row.readStatus === 'read' ? 'read' : 'unread',
    createdTimestamp: requiredDate(row, 'createdTimestamp'),
    messageRef: kind === 'external' ? null : refs.messageRef,
    threadRef: kind === 'external' ? null : refs.threadRef,
    replyActions,
    threadActionType: kind === 'thread_action' ? (row.threadActionType === 'unresolve' ? 'unresolve' : 'resolve') : null,
    reaction: kind === 'reaction' ? refs.reaction : null,
    // A message's reactions show as one item of its author's: the key is the message.
    aggregationKey: kind === 'reaction' ? refs.messageRef : null,
  };
}

/**
 * A user's notification channels from the original's `notification_channels` row, read as the
 * original answered them: it stored only the channels last sent, and a channel missing reads off.
 * Null for another key (the original had no other).
 */
export function channelsOf(row: DumpRow): { sendViaEmail: boolean; sendViaSlack: boolean } | null {
  if (row.key !== 'notification_channels') return null;
  const value = (json(row.value) ?? {}) as { email?: unknown; slack?: unknown };
  return { sendViaEmail: value.email === true, sendViaSlack: value.slack === true };
}

export { parseBoolean, parseTextArray, parseTimestamp, required, json };

/**
 * Writing a customer dump in the original service's format (what its GET /v1/customer/dbdump
 * streamed, and what the importer reads): a psql script that, run against the original's schema,
 * loads each table through a temporary table and an upsert, and ends with COMMIT; only when whole.
 * Also the tables and columns this server holds, in the original's names and order, and the ids
 * its rows get in a dump: the original keys every row by a UUID, this server by the customer's ids
 * and its own references, from which stable UUIDs are derived (the same on every export).
 */
import { createHash } from 'node:crypto';
import { encodeCopyField } from './copy-text.js';

/** The exported tables with their columns (the original's names), in the original's dump order. */
export const EXPORT_TABLES = {
  customers: ['id', 'createdTimestamp', 'sharedSecret'],
  applications: [
    'id',
    'name',
    'sharedSecret',
    'customEmailTemplate',
    'iconURL',
    'redirectURI',
    'createdTimestamp',
    'customerID',
    'eventWebhookURL',
    'eventWebhookSubscriptions',
    'enableEmailNotifications',
  ],
  users: ['id', 'createdTimestamp', 'state', 'name', 'screenName', 'email', 'profilePictureURL', 'externalID', 'externalProvider', 'platformApplicationID', 'metadata'],
  orgs: ['id', 'name', 'externalID', 'externalProvider', 'createdTimestamp', 'state', 'platformApplicationID', 'metadata'],
  threads: ['id', 'name', 'orgID', 'resolvedTimestamp', 'url', 'externalID', 'platformApplicationID', 'createdTimestamp', 'pageContextHash', 'metadata', 'extraClassnames'],
  messages: [
    'id',
    'content',
    'sourceID',
    'orgID',
    'threadID',
    'timestamp',
    'url',
    'deletedTimestamp',
    'lastUpdatedTimestamp',
    'type',
    'externalID',
    'platformApplicationID',
    'iconURL',
    'metadata',
    'extraClassnames',
    'translationKey',
    'skipLinkPreviews',
  ],
  application_webhooks: ['id', 'platformApplicationID', 'eventWebhookURL', 'eventWebhookSubscriptions'],
  // Per-thread e-mail opt-outs: a row with subscribed false is one, a row with true is none.
  email_subscription: ['userID', 'threadID', 'subscribed'],
  // Rows only: a SQL dump holds no file bytes (they are fetched through their download links).
  files: ['id', 'userID', 'mimeType', 'timestamp', 'name', 'size', 'uploadStatus', 'platformApplicationID'],
  message_attachments: ['id', 'messageID', 'type', 'data', 'timestamp'],
  message_mentions: ['userID', 'messageID'],
  message_reactions: ['id', 'userID', 'messageID', 'timestamp', 'unicodeReaction'],
  notifications: [
    'id',
    'recipientID',
    'senderID',
    'type',
    'aggregationKey',
    'readStatus',
    'createdTimestamp',
    'messageID',
    'reactionID',
    'externalTemplate',
    'externalURL',
    'replyActions',
    'metadata',
    'iconUrl',
    'platformApplicationID',
    'externalID',
    'extraClassnames',
    'threadActionType',
    'threadID',
  ],
  org_members: ['userID', 'orgID', 'platformApplicationID'],
  pages: ['orgID', 'contextData', 'contextHash'],
  thread_participants: ['threadID', 'userID', 'orgID', 'lastSeenTimestamp', 'subscribed'],
  user_preferences: ['userID', 'key', 'value'],
} as const;

export type ExportTable = keyof typeof EXPORT_TABLES;
export type ExportRow<T extends ExportTable> = Record<(typeof EXPORT_TABLES)[T][number], string | null>;

/** Primary keys of the original's tables, for the upsert each block ends with. */
const PRIMARY_KEYS: Record<ExportTable, string[]> = {
  customers: ['id'],
  applications: ['id'],
  users: ['id'],
  orgs: ['id'],
  threads: ['id'],
  messages: ['id'],
  application_webhooks: ['id'],
  email_subscription: ['userID', 'threadID'],
  files: ['id'],
  message_attachments: ['id'],
  message_mentions: ['userID', 'messageID'],
  message_reactions: ['id'],
  notifications: ['id'],
  org_members: ['orgID', 'userID'],
  pages: ['orgID', 'contextHash'],
  thread_participants: ['threadID', 'orgID', 'userID'],
  user_preferences: ['userID', 'key'],
};

const quoted = (names: readonly string[]) => names.map((name) => `"${name}"`).join(', ');

export const dumpText = {
  header: () => 'SET search_path = cord, public;\n\nBEGIN;\n\n',
  tableStart: (table: ExportTable) =>
    `\\echo Loading data into table ${table}...\n\nCREATE TEMP TABLE "tmp_${table}" (LIKE "${table}" INCLUDING DEFAULTS) ON COMMIT DROP;\n\n` +
    `COPY "tmp_${table}" (${quoted(EXPORT_TABLES[table])}) FROM stdin;\n`,
  row: <T extends ExportTable>(table: T, row: ExportRow<T>) =>
    `${(EXPORT_TABLES[table] as readonly string[]).map((column) => encodeCopyField((row as Record<string, string | null>)[column] ?? null)).join('\t')}\n`,
  tableEnd: (table: ExportTable) => {
    const columns = EXPORT_TABLES[table];
    return (
      `\\.\n\nINSERT INTO "${table}" (${quoted(columns)})\n  SELECT ${quoted(columns)} FROM "tmp_${table}"\n` +
      `  ON CONFLICT (${quoted(PRIMARY_KEYS[table])}) DO UPDATE\n  SET\n    ${columns.map((column) => `"${column}"=EXCLUDED."${column}"`).join(', ')}\n  ;\n\n\n`
    );
  },
  footer: () => '\nCOMMIT;\n',
  /** What a dump that broke ends with instead of COMMIT; (as the original did): importers refuse it. */
  failure: (message: string) => `\n-- ${message.replace(/\n/g, ' ')}\n`,
};

/** A stable UUID (name-based, version 5 layout) for a row of this server, from what identifies it. */
export function derivedUuid(...parts: string[]): string {
  const hash = createHash('sha1').update(parts.join('\u0000')).digest();
  hash[6] = (hash[6] & 0x0f) | 0x50;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The UUIDs rows get in an export, each service deriving the same ones: users and groups from the
 * customer's ids, threads and messages from the conversation service's references (which the
 * notification service holds too), reactions from what identifies them.
 */
export const exportIds = {
  user: (applicationId: string, userId: string) => derivedUuid(applicationId, 'user', userId),
  group: (applicationId: string, groupId: string) => derivedUuid(applicationId, 'group', groupId),
  thread: (applicationId: string, threadRef: string) => derivedUuid(applicationId, 'thread', threadRef),
  message: (applicationId: string, messageRef: string) => derivedUuid(applicationId, 'message', messageRef),
  reaction: (applicationId: string, messageRef: string, userId: string, reaction: string) => derivedUuid(applicationId, 'reaction', messageRef, userId, reaction),
  page: (applicationId: string, groupId: string, location: string) => derivedUuid(applicationId, 'page', groupId, location),
  attachment: (applicationId: string, messageRef: string, fileId: string) => derivedUuid(applicationId, 'attachment', messageRef, fileId),
};

/**
 * Importing a customer dump of the original service: the identity worker reads the dump, splits
 * it by bounded context and hands each service its rows through these internal endpoints, so that
 * every service writes only its own tables. Rows name users and groups by the customer's ids;
 * threads and messages, once imported, by the conversation service's internal references, which
 * each answer returns for the rows it was given (new or already there), keyed by the dump's own
 * UUID (`originalId`). Every endpoint is idempotent: a row already stored (same id) is left as it
 * is unless `overwrite` is set, so that importing again, or resuming an interrupted import,
 * changes nothing.
 */
import { ApiError } from '../errors.js';
import type { InternalClient } from '../http/internal-client.js';
import { isPlainObject, s, type Infer, type JsonSchema, type ObjectSchema, type Schema, type Shape } from '../schema/index.js';

const nullableString = () => s.string().nullable();
const timestamp = () => s.dateTime();

const thread = s.object({
  originalId: s.uuid(),
  id: s.string({ minLength: 1 }),
  groupID: s.string({ minLength: 1 }),
  name: s.string(),
  url: s.string(),
  location: s.unknown(),
  metadata: s.unknown(),
  extraClassnames: nullableString(),
  resolvedTimestamp: timestamp().nullable(),
  createdTimestamp: timestamp(),
});

const message = s.object({
  originalId: s.uuid(),
  id: s.string({ minLength: 1 }),
  threadRef: s.string({ minLength: 1 }),
  authorID: s.string({ minLength: 1 }),
  type: s.enum(['user_message', 'action_message']),
  content: s.unknown(),
  url: nullableString(),
  iconURL: nullableString(),
  translationKey: nullableString(),
  extraClassnames: nullableString(),
  metadata: s.unknown(),
  skipLinkPreviews: s.boolean(),
  createdTimestamp: timestamp(),
  updatedTimestamp: timestamp().nullable(),
  deletedTimestamp: timestamp().nullable(),
});

const reaction = s.object({ messageRef: s.string({ minLength: 1 }), userID: s.string({ minLength: 1 }), reaction: s.string({ minLength: 1 }), timestamp: timestamp() });
const mention = s.object({ messageRef: s.string({ minLength: 1 }), userID: s.string({ minLength: 1 }) });
const participant = s.object({
  threadRef: s.string({ minLength: 1 }),
  userID: s.string({ minLength: 1 }),
  lastSeenTimestamp: timestamp().nullable(),
  subscribed: s.boolean(),
});

/** A user's e-mail opt-out of a thread (original-extras §5.7): no mail of it reaches them. */
const threadOptOut = s.object({ threadRef: s.string({ minLength: 1 }), userID: s.string({ minLength: 1 }) });

const notification = s.object({
  originalId: s.uuid(),
  id: s.string({ minLength: 1 }),
  kind: s.enum(['external', 'reply', 'thread_action', 'reaction']),
  recipientID: s.string({ minLength: 1 }),
  actorID: s.string({ minLength: 1 }),
  template: nullableString(),
  url: nullableString(),
  iconUrl: nullableString(),
  extraClassnames: nullableString(),
  metadata: s.unknown(),
  readStatus: s.enum(['read', 'unread']),
  createdTimestamp: timestamp(),
  messageRef: nullableString(),
  threadRef: nullableString(),
  replyActions: s.array(s.string()).nullable(),
  threadActionType: s.enum(['resolve', 'unresolve']).nullable(),
  reaction: nullableString(),
  aggregationKey: nullableString(),
});

const webhook = s.object({ id: s.uuid(), url: s.string({ minLength: 1 }), events: s.array(s.string()) });

/**
 * A file keeps the dump's id (message attachments show it as `cord:<id>`). One whose bytes follow
 * is `uploading` until its last chunk has come; one without bytes keeps the status it is given.
 */
const file = s.object({
  id: s.uuid(),
  ownerID: s.string({ minLength: 1 }),
  name: s.string(),
  mimeType: s.string(),
  size: s.integer({ minimum: 0 }),
  uploadStatus: s.enum(['uploading', 'failed', 'cancelled']),
  createdTimestamp: timestamp(),
});
/** A piece of a file's bytes (base64, at most FILE_CHUNK_BYTES decoded); `last` marks the file uploaded. */
const fileChunk = s.object({ fileID: s.uuid(), seq: s.integer({ minimum: 0 }), data: s.string(), last: s.boolean() });
const attachment = s.object({ messageRef: s.string({ minLength: 1 }), fileID: s.uuid() });

const refs = s.object({ refs: s.array(s.object({ originalId: s.uuid(), ref: s.string() })), inserted: s.integer() });
const counted = s.object({ inserted: s.integer() });

/** One import endpoint: a batch of one kind of rows of one application. */
function importCall<Row extends Shape, Response extends Shape>(path: string, row: ObjectSchema<Row>, response: ObjectSchema<Response>) {
  return {
    method: 'POST',
    path,
    request: s.object({ overwrite: s.boolean(), rows: s.array(row, { maxItems: IMPORT_BATCH_ROWS }) }),
    check: batchCheck(row),
    response,
  } as const;
}

/** The JSON types a field's schema admits (`integer` as `number`), or null when it admits any value. */
function jsonTypesOf(schema: Schema<unknown>): Set<string> | null {
  const json = schema.jsonSchema();
  const options = Array.isArray(json.anyOf) ? (json.anyOf as JsonSchema[]) : [json];
  if (options.some((option) => typeof option.type !== 'string')) return null;
  return new Set(options.map((option) => (option.type === 'integer' ? 'number' : (option.type as string))));
}

const jsonTypeOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/**
 * The receiving service's check of a batch. Batches come only from identity's worker, which builds
 * every row from these same schemas, over the internal network with the internal token: parsing
 * each row's formats again (dates, UUIDs) cost the service about as much as writing the rows. So
 * only the structure is checked (a plain object per row, with the row schema's fields, each of the
 * JSON type the schema gives it); the values reach PostgreSQL as they came, whose column types
 * refuse a malformed one, and timestamps stay text.
 */
function batchCheck<Row extends Shape>(row: ObjectSchema<Row>) {
  const fields = new Map(Object.entries(row.shape).map(([key, schema]) => [key, jsonTypesOf(schema)]));
  const required = row.requiredKeys;
  const invalid = (what: string) => new ApiError('invalid_request', `The import batch is not valid: ${what}.`);
  return (body: unknown): { overwrite: boolean; rows: ReceivedRow<Infer<ObjectSchema<Row>>>[] } => {
    if (!isPlainObject(body) || typeof body.overwrite !== 'boolean' || !Array.isArray(body.rows)) throw invalid('it must be an object with overwrite and rows');
    if (body.rows.length > IMPORT_BATCH_ROWS) throw invalid(`at most ${IMPORT_BATCH_ROWS} rows`);
    body.rows.forEach((value: unknown, index: number) => {
      if (!isPlainObject(value)) throw invalid(`rows/${index} is not an object`);
      for (const key of required) if (!Object.hasOwn(value, key)) throw invalid(`rows/${index} lacks ${key}`);
      for (const key of Object.keys(value)) {
        if (!fields.has(key)) throw invalid(`rows/${index}/${key} is not a field of the row`);
        const types = fields.get(key);
        if (types && !types.has(jsonTypeOf(value[key]))) throw invalid(`rows/${index}/${key} must be ${[...types].join(' or ')}`);
      }
    });
    return { overwrite: body.overwrite, rows: body.rows as ReceivedRow<Infer<ObjectSchema<Row>>>[] };
  };
}

/** A row as the receiving service gets it: its timestamps are the RFC 3339 text they were sent as. */
type ReceivedRow<Row> = { [Key in keyof Row]: Row[Key] extends Date ? string : Row[Key] extends Date | null ? string | null : Row[Key] };

/** Rows per call: large enough to amortise the round trip, small enough for one short transaction. */
export const IMPORT_BATCH_ROWS = 1000;

export const importInternal = {
  threads: importCall('/internal/import/threads', thread, refs),
  messages: importCall('/internal/import/messages', message, refs),
  reactions: importCall('/internal/import/reactions', reaction, counted),
  mentions: importCall('/internal/import/mentions', mention, counted),
  participants: importCall('/internal/import/participants', participant, counted),
  notifications: importCall('/internal/import/notifications', notification, counted),
  webhooks: importCall('/internal/import/webhooks', webhook, counted),
  files: importCall('/internal/import/files', file, counted),
  fileChunks: importCall('/internal/import/file-chunks', fileChunk, counted),
  attachments: importCall('/internal/import/attachments', attachment, counted),
  threadOptOuts: importCall('/internal/import/thread-opt-outs', threadOptOut, counted),
} as const;

/** Bytes of a file per chunk handed on: one per call, as the service stores them (1 MiB). */
export const FILE_CHUNK_BYTES = 1024 * 1024;

export type ImportKind = keyof typeof importInternal;
export type ImportRow<K extends ImportKind> = Infer<(typeof importInternal)[K]['request']>['rows'][number];
/** A row as the service that imports it receives it (timestamps as text). */
export type ImportedRow<K extends ImportKind> = ReturnType<(typeof importInternal)[K]['check']>['rows'][number];
export type ImportResponse<K extends ImportKind> = Infer<(typeof importInternal)[K]['response']>;

/** The identity worker's side: one call per batch, the answer validated. */
export function importClient(clients: Record<'conversation' | 'notification' | 'webhooks' | 'mail', InternalClient>) {
  const owner: Record<ImportKind, 'conversation' | 'notification' | 'webhooks' | 'mail'> = {
    threads: 'conversation',
    messages: 'conversation',
    reactions: 'conversation',
    mentions: 'conversation',
    participants: 'conversation',
    notifications: 'notification',
    webhooks: 'webhooks',
    files: 'conversation',
    fileChunks: 'conversation',
    attachments: 'conversation',
    threadOptOuts: 'mail',
  };
  return {
    async send<K extends ImportKind>(kind: K, applicationId: string, rows: ImportRow<K>[], overwrite: boolean, requestId: string): Promise<ImportResponse<K>> {
      const contract = importInternal[kind];
      const answer = await clients[owner[kind]].call(contract.method, contract.path, { applicationId, requestId, body: { overwrite, rows }, timeoutMs: 60_000 });
      return contract.response.parse(answer) as ImportResponse<K>;
    },
  };
}
export type ImportClient = ReturnType<typeof importClient>;

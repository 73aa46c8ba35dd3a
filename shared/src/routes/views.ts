/**
 * The objects the public API answers with, as schemas: each defined once and used by every route
 * that returns it. They describe the services' view builders exactly (every key, which may be
 * null), so that the OpenAPI document can generate clients and the integration tests can check
 * every answer they receive; values the API leaves open (metadata, translation parameters, a
 * delivery's body) stay open here too. Over 300 lines because it is a catalog: one declarative
 * schema per answer object, read one at a time.
 */
import { s, type Infer, type Schema, type Shape } from '../schema/index.js';
import { MessageContentSchema } from './message-content.js';
import { userFields } from './user-fields.js';

const components: Schema<unknown>[] = [];

/** Names a view for the OpenAPI components, where it is documented once and referred to. */
export function view<S extends Schema<unknown>>(name: string, schema: S): S {
  components.push(schema.named(name));
  return schema;
}

/** The named views, in the order the OpenAPI document lists them. */
export const VIEW_COMPONENTS: readonly Schema<unknown>[] = components;

/** A value as JSON carries it: a timestamp the schema reads as a Date is answered as its ISO text. */
type AsJson<T> = T extends Date ? string : T extends readonly (infer U)[] ? AsJson<U>[] : T extends object ? { [K in keyof T]: AsJson<T[K]> } : T;

/**
 * What a view's builder returns: the view's type, with its timestamps as text. A builder declared
 * to return it does not compile while it answers a key the view lacks, or lacks one it has.
 */
export type ViewAnswer<V extends Schema<unknown>> = AsJson<Infer<V>>;

export const timestamp = () => s.dateTime();
const ids = () => s.array(s.string());
const status = () => s.enum(['active', 'deleted']);

/** `{[key]: value}`, typed by the key. */
function field<const K extends string, V>(key: K, value: V): Record<K, V> {
  return { [key]: value } as Record<K, V>;
}

/** Request fields as an answer gives them back: each key present, each value as stored. */
function answered<S extends Shape>(shape: S): { [K in keyof S]: Schema<Infer<S[K]>> } {
  return Object.fromEntries(Object.entries(shape).map(([key, field]) => [key, field.asAnswer()])) as { [K in keyof S]: Schema<Infer<S[K]>> };
}

/** The shape with `first` keys first, then the others in their own order. */
function inOrder<S extends Shape>(shape: S, first: readonly (keyof S & string)[]): S {
  const rest = Object.keys(shape).filter((key) => !first.includes(key));
  return Object.fromEntries([...first, ...rest].map((key) => [key, shape[key]])) as S;
}

/** `{success: true, message}`: the answer of most writes. */
export const successView = view('Success', s.object({ success: s.literal(true), message: s.string() }));

/** A write's answer that also names what it created or queued, e.g. `successWith('messageID')`. */
export function successWith<const K extends string>(key: K) {
  return s.object({ ...successView.shape, ...field(key, s.string()) });
}

/** The next page's token (null on the last page) and the number of matches over all pages. */
export const paginationView = view('Pagination', s.object({ token: s.string().nullable(), total: s.integer({ minimum: 0 }) }));

/** `{<key>: items, pagination}`: a page of a cursor-paginated list. */
export function pageOf<const K extends string, T>(key: K, item: Schema<T>) {
  return s.object({ ...field(key, s.array(item)), pagination: paginationView });
}

// ---- identity ------------------------------------------------------------------------------

/**
 * Where the answers have always placed these user fields (not the request schema's order); a
 * field added to the request schema follows them, in that schema's order.
 */
const USER_ANSWER_ORDER = [
  'email',
  'status',
  'name',
  'shortName',
  'short_name',
  'first_name',
  'last_name',
  'profilePictureURL',
  'profile_picture_url',
  'metadata',
] as const satisfies readonly (keyof typeof userFields)[];

/**
 * Every field the user requests take (with the earlier generation's snake_case aliases beside
 * each), as the answers give it: always present, as stored, in the answers' order.
 */
export const userAnswerFields = answered(inOrder(userFields, USER_ANSWER_ORDER));

/** A user in GET /v1/users: its id, every user field and its creation time. */
export const userListItemView = view('User', s.object({
  id: s.string(),
  ...userAnswerFields,
  createdTimestamp: timestamp(),
}));

/**
 * Chat workspaces cannot be connected or linked here: a group's flag is always false and a user's
 * list always empty. Each is answered under the API document's name and, beside it, the original's
 * (connectedToSlack, groupIDsWithLinkedSlackProfile), so that clients of the original read them.
 */
const chatConnection = {
  connectedToChat: s.boolean(),
  connectedToSlack: s.boolean().describe('The same as connectedToChat, under the original service\'s name.'),
};
const linkedChatProfiles = {
  groupIDsWithLinkedChatProfile: ids(),
  groupIDsWithLinkedSlackProfile: ids().describe('The same as groupIDsWithLinkedChatProfile, under the original service\'s name.'),
};

/** GET /v1/users/<ID>: the list fields and the user's active groups (`organizations` is their alias). */
export const userDetailsView = view('UserDetails', s.object({
  ...userListItemView.shape,
  groups: ids(),
  organizations: ids(),
  ...linkedChatProfiles,
}));

/** A user as the earlier generation lists it. */
export const legacyUserView = view('EarlierGenerationUser', s.object({
  id: s.string(),
  name: s.string().nullable(),
  email: s.string().nullable(),
  first_name: s.string().nullable(),
  last_name: s.string().nullable(),
}));

export const groupMemberView = view('GroupMember', s.object({
  id: s.string(),
  name: s.string().nullable(),
  email: s.string().nullable(),
  shortName: s.string().nullable(),
  createdTimestamp: timestamp(),
  status: status(),
  profilePictureURL: s.string().nullable(),
  metadata: s.flatObject(),
}));

/** A group in GET /v1/groups; no chat workspace can be connected here, so `connectedToChat` is false. */
export const groupListItemView = view('Group', s.object({
  id: s.string(),
  name: s.string(),
  status: status(),
  ...chatConnection,
  metadata: s.flatObject(),
}));

export const groupDetailsView = view('GroupDetails', s.object({
  id: s.string(),
  name: s.string(),
  status: status(),
  members: ids(),
  ...chatConnection,
  metadata: s.flatObject(),
}));

/** A batch answered 202, followed by its id: waiting or running, then completed or failed. */
export const batchStatusView = view('BatchStatus', s.union([
  s.object({ status: s.enum(['waiting', 'active']) }),
  s.object({ status: s.literal('completed'), message: s.string() }),
  s.object({ status: s.literal('failed'), error: s.object({ error: s.string(), message: s.string() }) }),
]));

/** An import's progress and outcome. */
export const importView = view('Import', s.object({
  importID: s.uuid(),
  status: s.enum(['waiting', 'active', 'completed', 'failed']),
  progress: s.object({
    bytesRead: s.integer({ minimum: 0 }),
    dumpBytes: s.integer({ minimum: 0 }),
    fraction: s.number(),
  }),
  counts: s
    .record(s.object({ imported: s.integer({ minimum: 0 }), existing: s.integer({ minimum: 0 }) }))
    .describe('Rows imported and rows already there, by entity.'),
  skipped: s.array(s.object({ table: s.string(), rows: s.integer({ minimum: 0 }), reason: s.string() })),
  conflicts: s.array(
    s.object({ entity: s.string(), id: s.string(), applicationID: s.string().optional(), reason: s.string() }),
  ),
  error: s.string().nullable(),
  createdTimestamp: timestamp(),
  startedTimestamp: timestamp().nullable(),
  finishedTimestamp: timestamp().nullable(),
}));

// ---- conversation --------------------------------------------------------------------------

export const threadView = view('Thread', s.object({
  id: s.string(),
  // Deprecated alias of groupID.
  organizationID: s.string(),
  groupID: s.string(),
  total: s.integer({ minimum: 0 }),
  userMessages: s.integer({ minimum: 0 }),
  actionMessages: s.integer({ minimum: 0 }),
  deletedMessages: s.integer({ minimum: 0 }),
  resolved: s.boolean(),
  resolvedTimestamp: timestamp().nullable(),
  participants: s.array(
    s.object({ lastSeenTimestamp: timestamp().nullable(), userID: s.string(), displayName: s.string().nullable() }),
  ),
  subscribers: ids(),
  repliers: ids(),
  actionMessageRepliers: ids(),
  mentioned: ids(),
  typing: ids(),
  name: s.string(),
  url: s.string(),
  location: s.flatObject(),
  metadata: s.flatObject(),
  extraClassnames: s.string().nullable(),
}));

const fileAttachmentView = view('MessageFileAttachment', s.object({
  type: s.literal('file'),
  id: s.string(),
  name: s.string(),
  url: s.string().describe('A signed download link, valid for an hour.'),
  mimeType: s.string(),
  size: s.integer({ minimum: 0 }),
  uploadStatus: s.enum(['uploading', 'uploaded', 'failed', 'cancelled']),
}));

const linkPreviewAttachmentView = view('MessageLinkPreviewAttachment', s.object({
  type: s.literal('link_preview'),
  id: s.string(),
  url: s.string(),
  imageURL: s.string().nullable(),
  title: s.string().nullable(),
  description: s.string().nullable(),
}));

export const messageView = view('Message', s.object({
  id: s.string(),
  authorID: s.string(),
  // Deprecated alias of groupID.
  organizationID: s.string(),
  groupID: s.string(),
  threadID: s.string(),
  content: new MessageContentSchema(),
  plaintext: s.string(),
  url: s.string().nullable(),
  createdTimestamp: timestamp(),
  updatedTimestamp: timestamp().nullable(),
  deletedTimestamp: timestamp().nullable(),
  type: s.enum(['action_message', 'user_message']),
  iconURL: s.string().nullable(),
  translationKey: s.string().nullable(),
  metadata: s.flatObject(),
  extraClassnames: s.string().nullable(),
  skipLinkPreviews: s.boolean(),
  attachments: s.array(s.union([fileAttachmentView, linkPreviewAttachmentView])),
  reactions: s.array(s.object({ reaction: s.string(), userID: s.string(), timestamp: timestamp() })),
  seenBy: ids(),
}));

// ---- notification --------------------------------------------------------------------------

/** A user as a notification names them: the directory's fields and the names a client shows. */
export const notificationUserView = view('NotificationUser', s.object({
  id: s.string(),
  name: s.string().nullable(),
  shortName: s.string().nullable(),
  displayName: s.string(),
  secondaryDisplayName: s.string(),
  profilePictureURL: s.string().nullable(),
  metadata: s.flatObject(),
}));

export const notificationView = view('Notification', s.object({
  id: s.string(),
  senderUserIDs: ids(),
  iconUrl: s.string().nullable(),
  header: s.array(
    s.union([
      s.object({ type: s.literal('text'), text: s.string(), bold: s.boolean() }),
      s.object({ type: s.literal('user'), userID: s.string(), user: notificationUserView }),
    ]),
  ),
  headerTranslation: s.object({ key: s.string(), parameters: s.record(s.unknown()) }).nullable(),
  attachment: s.union([
    s.object({ type: s.literal('url'), url: s.string().nullable() }),
    s.object({ type: s.literal('message'), messageID: s.string(), threadID: s.string(), message: messageView }),
    s.object({ type: s.literal('thread'), thread: threadView }),
  ]),
  readStatus: s.enum(['unread', 'read']),
  timestamp: timestamp(),
  extraClassnames: s.string().nullable(),
  metadata: s.flatObject(),
  text: s.string().describe('The header as plain text, users by name.'),
}));

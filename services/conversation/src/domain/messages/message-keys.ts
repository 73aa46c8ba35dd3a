/**
 * Which column each key of a message's request is written to: a key named as a column is that
 * column; every other key of the create and update bodies is listed here, as an alias of a column
 * or as written by the use case itself (null: reactions, attachments, subscriptions). A request
 * key that is neither a column nor listed does not compile.
 */
import type { conversationRoutes, RouteBody } from '@collab/shared';
import type { MessageFields } from '../../repositories/messages.repository.js';

/** POST /v1/threads/<ID>/messages body after validation. */
export type MessageCreationInput = RouteBody<typeof conversationRoutes.createMessage>;
/** PUT /v1/threads/<tID>/messages/<mID> body after validation. */
export type MessageUpdateInput = RouteBody<typeof conversationRoutes.updateMessage>;

type MessageInput = MessageCreationInput | MessageUpdateInput;
type MessageKey = keyof MessageCreationInput | keyof MessageUpdateInput;
type Column = keyof MessageFields;
/** What a key is given, in whichever body takes it. */
type Given<K extends MessageKey> = (MessageCreationInput & MessageUpdateInput)[K];
/** The columns whose type can hold what the key is given. */
type ColumnTaking<K extends MessageKey> = { [C in Column]-?: Given<K> extends MessageFields[C] ? C : never }[Column];

const OTHER_KEYS: { [K in Exclude<MessageKey, Column>]: ColumnTaking<K> | null } = {
  id: 'externalId',
  authorID: 'authorId',
  iconURL: 'iconUrl',
  createdTimestamp: 'createdAt',
  updatedTimestamp: 'updatedAt',
  deletedTimestamp: 'deletedAt',
  addReactions: null,
  removeReactions: null,
  addAttachments: null,
  removeAttachments: null,
  subscribeToThread: null,
  createThread: null,
  deleted: null,
};

/** The column the key is written to; null when the use case writes it otherwise. */
function columnOf(key: MessageKey): Column | null {
  return Object.hasOwn(OTHER_KEYS, key) ? OTHER_KEYS[key as keyof typeof OTHER_KEYS] : (key as Column);
}

/** The columns a request gives, each from its key (keys not given are left out). */
export function messageColumnsFrom(input: MessageInput): MessageFields {
  // Compiles only while the request schema and the column map agree on the fields both name.
  const given: Partial<Pick<MessageFields, MessageKey & Column>> = input;
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(given)) {
    const column = columnOf(key as MessageKey);
    if (column !== null && value !== undefined) fields[column] = value;
  }
  return fields as MessageFields;
}

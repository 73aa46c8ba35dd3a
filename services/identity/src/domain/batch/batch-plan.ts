/**
 * What a POST /v1/batch body means, as pure logic shared by the request (validation, counts) and
 * the job (what to write): `groups` and `organizations` are aliases, the last occurrence of an id
 * wins, a field sent as null on a user is cleared, and the message counts the items as sent.
 */
import { ApiError, formatPath, type batchBody, type Infer } from '@collab/shared';
import type { GroupFields } from '../../repositories/groups.repository.js';
import type { UserFields } from '../../repositories/users.repository.js';
import { userFieldsFrom } from '../users/users.js';

export type BatchInput = Infer<typeof batchBody>;
export type BatchUserItem = NonNullable<BatchInput['users']>[number];
export type BatchGroupItem = NonNullable<BatchInput['groups']>[number];

/** One entity to write: the last item with its id, and where that item sits in the request. */
export interface PlannedItem<Item> {
  id: string;
  /** `users/3`, `groups/0` or `organizations/2`: the item that wins, for error messages. */
  path: readonly (string | number)[];
  item: Item;
}

export interface BatchPlan {
  /** One entry per distinct id (the last occurrence wins), in code-point order of the id. */
  users: PlannedItem<BatchUserItem>[];
  groups: PlannedItem<BatchGroupItem>[];
  /** Items as sent (duplicates included), for the response message. */
  counts: { users: number; groups: number };
}

/** Code-point order, the order of PostgreSQL's `C` collation (UTF-8 bytes compare the same way). */
function byCodePoint<T extends { id: string }>(items: T[]): T[] {
  const keyed = items.map((item) => ({ item, key: Buffer.from(item.id, 'utf8') }));
  keyed.sort((a, b) => Buffer.compare(a.key, b.key));
  return keyed.map(({ item }) => item);
}

function lastById<Item extends { id: string }>(key: string, items: readonly Item[]): PlannedItem<Item>[] {
  const byId = new Map<string, PlannedItem<Item>>();
  items.forEach((item, index) => byId.set(item.id, { id: item.id, path: [key, index], item }));
  return byCodePoint([...byId.values()]);
}

/** `groups` and `organizations` are aliases; when both are present `groups` is used. */
export function planBatch(batch: BatchInput): BatchPlan {
  const users = batch.users ?? [];
  const groupsKey = batch.groups !== undefined ? 'groups' : 'organizations';
  const groups = batch.groups ?? batch.organizations ?? [];
  return {
    users: lastById('users', users),
    groups: lastById(groupsKey, groups),
    counts: { users: users.length, groups: groups.length },
  };
}

/** `You successfully batch updated 1 user and 0 groups`. */
export function batchMessage(counts: { users: number; groups: number }): string {
  const noun = (count: number, word: string) => `${count} ${count === 1 ? word : `${word}s`}`;
  return `You successfully batch updated ${noun(counts.users, 'user')} and ${noun(counts.groups, 'group')}`;
}

/** Group items that can only update: without a non-empty name they cannot create their group. */
export function namelessGroups(plan: BatchPlan): PlannedItem<BatchGroupItem>[] {
  return plan.groups.filter((group) => !group.item.name);
}

/** The error for the first (in request order) group item that would create a group without a name. */
export function missingGroupName(items: readonly PlannedItem<BatchGroupItem>[]): ApiError | null {
  if (items.length === 0) return null;
  const first = items.reduce((a, b) => ((a.path[1] as number) <= (b.path[1] as number) ? a : b));
  return new ApiError('missing_field', `Missing required field: ${formatPath([...first.path, 'name'])}.`);
}

/** The user fields an item writes: absent unchanged, null clears, empty e-mail absent, camelCase first. */
export function userItemFields(item: BatchUserItem): UserFields {
  const { id: _id, ...input } = item;
  return userFieldsFrom(input);
}

/** The group fields an item writes: only the provided ones. */
export function groupItemFields(item: BatchGroupItem): GroupFields {
  const fields: GroupFields = {};
  if (item.name !== undefined) fields.name = item.name;
  if (item.status !== undefined) fields.status = item.status;
  if (item.metadata !== undefined) fields.metadata = item.metadata;
  return fields;
}

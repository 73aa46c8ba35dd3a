/**
 * Users and groups as the identity service knows them, asked over internal HTTP at the moment of
 * the check (no local copy that could lag behind). Identity unreachable → 503, never a 4xx.
 */
import { ApiError } from './errors.js';
import { identityLookup } from './contracts/identity.js';
import type { InternalClient } from './http/internal-client.js';
import { isIdentifier } from './schema/formats.js';

export type LookupResult = ReturnType<typeof identityLookup.response.parse>;
export type DirectoryUser = LookupResult['users'][number];

export interface Lookup {
  users: Map<string, DirectoryUser>;
  group: LookupResult['group'];
  isMember(userId: string): boolean;
}

export interface IdentityDirectory {
  lookup(applicationId: string, request: { userIds: readonly string[]; groupId?: string | null }, requestId: string): Promise<Lookup>;
}

export function identityDirectory(client: InternalClient): IdentityDirectory {
  return {
    async lookup(applicationId, { userIds, groupId }, requestId) {
      // Only identifiers name users and groups: anything else is unknown without
      // asking, and a client's megabyte-long "id" must not become a lookup identity refuses.
      const unique = [...new Set(userIds)].filter(isIdentifier);
      const group = groupId && isIdentifier(groupId) ? groupId : null;
      let raw: unknown;
      try {
        raw = await client.call('POST', identityLookup.path, {
          applicationId,
          requestId,
          body: { userIds: unique, groupId: group },
        });
      } catch (error) {
        // Identity refusing a lookup this service built (wrong internal token, a rejected body) is a
        // broken dependency, not the caller's mistake: its 4xx must not reach the client as one.
        if (error instanceof ApiError && error.status < 500)
          throw new ApiError('bad_gateway', `The identity service refused the lookup (${error.code}).`);
        throw error;
      }
      let result: LookupResult;
      try {
        result = identityLookup.response.parse(raw);
      } catch {
        // The schema's own errors are 4xx validation codes meant for clients' input.
        throw new ApiError('bad_gateway', 'The identity service answered with an invalid response.');
      }
      const members = new Set(result.group?.memberIds ?? []);
      return {
        users: new Map(result.users.map((user) => [user.id, user])),
        group: result.group,
        isMember: (userId) => members.has(userId),
      };
    },
  };
}

/** `displayName` of a participant: shortName if set, else name; null when the user has no name. */
export function displayName(user: DirectoryUser | undefined): string | null {
  if (!user || user.name === null) return null;
  return user.shortName ?? user.name;
}

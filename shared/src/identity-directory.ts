/**
 * Users and groups as the identity service knows them, asked over internal HTTP at the moment of
 * the check, or answered from an earlier answer while the application's directory version says
 * nothing changed since (`reusingIdentityDirectory`). Identity unreachable → 503, never a 4xx.
 */
import type { ApplicationVersions } from './application-versions.js';
import { ApiError } from './errors.js';
import { identityLookup } from './contracts/identity.js';
import type { InternalClient } from './http/internal-client.js';
import type { Logger } from './logger.js';
import { ReusedAnswers } from './reused-answers.js';
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

/**
 * Bounds the memory of reused answers, counted in the users and group members they hold (each an
 * id and, for users, their fields: a few hundred bytes at most): about 10 MB.
 */
export const REUSED_LOOKUPS_MAX_WEIGHT = 50_000;
/** A lookup naming more than this many characters of ids is always asked (its key would be large). */
const REUSED_LOOKUP_MAX_KEY_LENGTH = 4096;

const weightOf = (lookup: Lookup) => 1 + lookup.users.size + (lookup.group?.memberIds.length ?? 0);

/**
 * A directory that reuses identity's answer to the same question while the application's
 * directory version is the one the answer was filed under (reused-answers.ts).
 */
export function reusingIdentityDirectory(
  inner: IdentityDirectory,
  versions: ApplicationVersions,
  logger: Logger,
  maxWeight = REUSED_LOOKUPS_MAX_WEIGHT,
): IdentityDirectory {
  const answers = new ReusedAnswers<Lookup>(versions, 'directory', logger, { maxWeight, weightOf });
  return {
    async lookup(applicationId, request, requestId) {
      const question = `${request.groupId ?? ''} ${[...new Set(request.userIds)].sort().join(' ')}`;
      const ask = () => inner.lookup(applicationId, request, requestId);
      return question.length > REUSED_LOOKUP_MAX_KEY_LENGTH ? ask() : answers.answer(applicationId, question, ask);
    },
  };
}

/** `displayName` of a participant: shortName if set, else name; null when the user has no name. */
export function displayName(user: DirectoryUser | undefined): string | null {
  if (!user || user.name === null) return null;
  return user.shortName ?? user.name;
}

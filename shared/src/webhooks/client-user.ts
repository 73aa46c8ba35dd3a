/** The user object of outgoing events, in the shape receivers already parse. */
import type { DirectoryUser } from '../identity-directory.js';

/**
 * `displayName` falls back to the name and then to "unknown", `secondaryDisplayName` to the short
 * name and then to "Unknown": receivers print them as they are. A user deleted meanwhile is
 * described by its id alone.
 */
export function clientUserData(id: string, user: DirectoryUser | undefined) {
  const name = user?.name ?? null;
  const shortName = user?.shortName ?? null;
  return {
    id,
    name,
    shortName,
    displayName: shortName ?? name ?? 'unknown',
    secondaryDisplayName: name ?? shortName ?? 'Unknown',
    profilePictureURL: user?.profilePictureURL ?? null,
    metadata: user?.metadata ?? {},
  };
}

export type ClientUserData = ReturnType<typeof clientUserData>;

import type { Db } from '../../repositories/db.js';
import { usersRepository } from '../../repositories/users.repository.js';
import { usersNotFound } from '../not-found.js';

/** Internal ids of the given users, in order; any unknown id fails with `401 user_not_found`. */
export async function resolveUserIds(db: Db, applicationId: string, externalIds: readonly string[]): Promise<string[]> {
  const known = await usersRepository.internalIds(db, applicationId, externalIds);
  const unknown = [...new Set(externalIds.filter((id) => !known.has(id)))];
  if (unknown.length > 0) throw usersNotFound(unknown);
  return externalIds.map((id) => known.get(id)!);
}

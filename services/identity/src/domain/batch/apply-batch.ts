/**
 * Applies a recorded batch, all or nothing, in one transaction: users first, then groups, then memberships, so that members may be users of the same
 * batch. Reads the current state and writes the batch's values, so running it twice ends in the
 * same state. The batch's body is read from its record (identity.batches), which is marked
 * finished with its outcome: completed in the same transaction, so it is applied once however
 * often its job runs; failed when the client's error (an ApiError 4xx) rejects it.
 */
import { ApiError } from '@collab/shared';
import type { DataSource, EntityManager } from 'typeorm';
import { batchRepository } from '../../repositories/batch.repository.js';
import { groupsRepository } from '../../repositories/groups.repository.js';
import { usersNotFound } from '../not-found.js';
import {
  batchMessage,
  groupItemFields,
  missingGroupName,
  namelessGroups,
  planBatch,
  userItemFields,
  type BatchInput,
  type BatchPlan,
} from './batch-plan.js';

/** Applies the batch recorded as `batchId`; returns its message. */
export async function applyBatch(db: DataSource, applicationId: string, batchId: string): Promise<{ message: string }> {
  await batchRepository.start(db, batchId);
  try {
    return await db.transaction(async (tx) => {
      const recorded = await batchRepository.lock(tx, batchId);
      // Records go with their application.
      if (!recorded) throw new ApiError('application_not_found', 'The application of this batch no longer exists.');
      // Finished by an earlier run: report its outcome again.
      if (recorded.state === 'completed') return { message: recorded.message! };
      if (recorded.state === 'failed') throw new ApiError(recorded.error!.error, recorded.error!.message);
      // The body the request validated before it recorded it; an unfinished record always has one.
      const plan = planBatch(recorded.payload as BatchInput);
      const message = batchMessage(plan.counts);
      await writeBatch(tx, applicationId, plan);
      await batchRepository.complete(tx, batchId, message);
      return { message };
    });
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) await batchRepository.fail(db, batchId, error.toBody());
    throw error;
  }
}

async function writeBatch(tx: EntityManager, applicationId: string, plan: BatchPlan): Promise<void> {
  if (!(await batchRepository.lockApplication(tx, applicationId)))
    throw new ApiError('application_not_found', 'The application of this batch no longer exists.');

  // Users: create the missing ones bare, lock all in id order, then write the provided fields.
  const userIds = plan.users.map((user) => user.id);
  await batchRepository.insertMissingUsers(tx, applicationId, userIds);
  const lockedUsers = await batchRepository.lockUsers(tx, applicationId, userIds);
  // A user deleted between the insert and the lock (a concurrent DELETE): try again later.
  if (lockedUsers.size !== userIds.length) throw new Error('a user of the batch disappeared while it was applied');
  await batchRepository.updateUsers(
    tx,
    applicationId,
    plan.users.map((user) => ({ externalId: user.id, fields: userItemFields(user.item) })),
  );

  // Groups: the same, except that a new group needs a name (checked by the request too, but a
  // group may have been deleted since).
  const named = plan.groups.filter((group) => group.item.name);
  await batchRepository.insertMissingGroups(
    tx,
    applicationId,
    named.map((group) => ({ externalId: group.id, name: group.item.name! })),
  );
  const lockedGroups = await batchRepository.lockGroups(
    tx,
    applicationId,
    plan.groups.map((group) => group.id),
  );
  const missingName = missingGroupName(namelessGroups(plan).filter((group) => !lockedGroups.has(group.id)));
  if (missingName) throw missingName;
  if (lockedGroups.size !== plan.groups.length) throw new Error('a group of the batch disappeared while it was applied');
  await batchRepository.updateGroups(
    tx,
    applicationId,
    plan.groups.map((group) => ({ externalId: group.id, fields: groupItemFields(group.item) })),
  );

  // Memberships: `members` replaces a group's membership exactly; any unknown user fails it all.
  const withMembers = [...plan.groups]
    .filter((group) => group.item.members !== undefined)
    .sort((a, b) => (a.path[1] as number) - (b.path[1] as number));
  const memberIds = [...new Set(withMembers.flatMap((group) => group.item.members ?? []))];
  const knownMembers = await groupsRepository.lockUsers(tx, applicationId, memberIds);
  const unknown = memberIds.filter((id) => !knownMembers.has(id));
  if (unknown.length > 0) throw usersNotFound(unknown);
  await batchRepository.replaceMemberships(
    tx,
    applicationId,
    withMembers.map((group) => ({
      groupId: lockedGroups.get(group.id)!,
      userIds: [...new Set((group.item.members ?? []).map((id) => knownMembers.get(id)!))],
    })),
  );
}

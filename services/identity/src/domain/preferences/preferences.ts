/**
 * A user's notification preferences (decision 51): both channels on until set, and a PUT changes
 * only the channels it sends, so GET and the client viewer always agree. Nothing is sent to Slack;
 * `sendViaSlack` is only stored and answered.
 */
import { ApiError, type preferencesRoutes, type RouteBody } from '@collab/shared';
import { preferencesRepository, type NotificationChannels } from '../../repositories/preferences.repository.js';
import type { IdentityContext } from '../context.js';

export type PreferencesInput = RouteBody<typeof preferencesRoutes.updatePreferences>;

const userNotFound = (userId: string) => new ApiError('user_not_found', `Platform user ${userId} not found.`);

export async function getPreferences(ctx: IdentityContext, applicationId: string, userId: string): Promise<{ notification_channels: NotificationChannels }> {
  const channels = await preferencesRepository.find(ctx.db, applicationId, userId);
  if (!channels) throw userNotFound(userId);
  return { notification_channels: channels };
}

export async function updatePreferences(ctx: IdentityContext, applicationId: string, userId: string, input: PreferencesInput): Promise<void> {
  if (!(await preferencesRepository.merge(ctx.db, applicationId, userId, input.value))) throw userNotFound(userId);
}

/** The channels of the users named (for the mail service); unknown users are left out. */
export function channelsOf(ctx: IdentityContext, applicationId: string, userIds: readonly string[]) {
  return preferencesRepository.findMany(ctx.db, applicationId, userIds);
}

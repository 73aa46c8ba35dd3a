/**
 * A user's notification preferences (decision 51): both channels on until set, and a PUT changes
 * only the channels it sends, so GET and the client viewer always agree. Nothing is sent to Slack;
 * `sendViaSlack` is only stored and answered.
 */
import { ApiError, type MailContext, type preferencesRoutes, type RouteBody } from '@collab/shared';
import { applicationsRepository } from '../../repositories/applications.repository.js';
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

/**
 * What the mail service asks before it sends (contract `identityMailContext`): the application's
 * name and mail settings, and the users named (unknown ones left out). Null for an unknown application.
 */
export async function mailContext(ctx: IdentityContext, applicationId: string, userIds: readonly string[], groupId: string): Promise<MailContext | null> {
  const application = await applicationsRepository.findById(ctx.db, applicationId);
  if (!application) return null;
  return {
    application: { name: application.name, redirectURI: application.redirectUri, emailSettings: application.emailSettings ?? {} },
    users: await preferencesRepository.mailRecipients(ctx.db, applicationId, userIds, groupId),
  };
}

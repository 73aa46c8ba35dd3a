/**
 * This service's part of importing a customer dump: the webhooks an application registered, with
 * their ids (the API shows `cord:<id>`), so that receivers and tooling that name them keep working.
 */
import type { ImportHandlers } from '@collab/shared';
import { importRepository } from '../../repositories/import.repository.js';
import type { WebhooksContext } from '../context.js';

export function importHandlers(ctx: Pick<WebhooksContext, 'db' | 'targetsChanged'>): ImportHandlers {
  return {
    webhooks: async (applicationId, rows, overwrite) => {
      const inserted = await importRepository.webhooks(ctx.db, applicationId, rows, overwrite);
      await ctx.targetsChanged(applicationId);
      return { inserted };
    },
  };
}

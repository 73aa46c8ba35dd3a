/** The conversation-link-previews queue's job: a message's previews brought in line with its content. */
import type { JobHandlers } from '@collab/shared';
import type { DataSource } from 'typeorm';
import { refreshLinkPreviews } from '../domain/link-previews/link-previews.js';
import type { PageCache } from '../domain/link-previews/pages.js';

export function linkPreviewJobs(deps: { db: DataSource; pages: PageCache }): JobHandlers<'conversation-link-previews'> {
  return {
    'message.preview': async ({ applicationId, messageId }, _job, log) => {
      const counts = await refreshLinkPreviews(deps, applicationId, messageId, log);
      log.info(counts, 'link previews refreshed');
      return counts;
    },
  };
}

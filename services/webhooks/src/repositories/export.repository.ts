/** The SQL of exporting this service's part of a customer dump: a page of an application's registered webhooks. */
import type { Queryable } from '@collab/shared';

export const exportRepository = {
  async registrations(db: Queryable, applicationId: string, after: string | null, limit: number) {
    return (await db.query(
      `SELECT id, url, events FROM webhooks.registrations WHERE application_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
      [applicationId, after ?? '00000000-0000-0000-0000-000000000000', limit],
    )) as { id: string; url: string; events: string[] }[];
  },
};

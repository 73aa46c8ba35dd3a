/** The SQL of importing a customer dump's registered webhooks, with their ids. */
import { countAffected, type ImportedRow, type Queryable } from '@collab/shared';

export const importRepository = {
  async webhooks(db: Queryable, applicationId: string, batch: ImportedRow<'webhooks'>[], overwrite: boolean): Promise<number> {
    const inserted = await countAffected(
      db,
      `INSERT INTO webhooks.registrations (id, application_id, url, events)
       SELECT r.id, $1, r.url, ARRAY(SELECT jsonb_array_elements_text(r.events))
       FROM jsonb_to_recordset($2::jsonb) AS r(id uuid, url text, events jsonb)
       ${overwrite ? 'ON CONFLICT (application_id, url) DO UPDATE SET events = EXCLUDED.events' : 'ON CONFLICT DO NOTHING'}`,
      [applicationId, JSON.stringify(batch)],
    );
    return inserted;
  },
};

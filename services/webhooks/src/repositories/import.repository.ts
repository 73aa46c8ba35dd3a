/** The SQL of importing a customer dump's registered webhooks, with their ids. */
import type { ImportedRow, Queryable } from '@collab/shared';

export const importRepository = {
  async webhooks(db: Queryable, applicationId: string, rows: ImportedRow<'webhooks'>[], overwrite: boolean): Promise<number> {
    const inserted: unknown[] = await db.query(
      `INSERT INTO webhooks.registrations (id, application_id, url, events)
       SELECT r.id, $1, r.url, ARRAY(SELECT jsonb_array_elements_text(r.events))
       FROM jsonb_to_recordset($2::jsonb) AS r(id uuid, url text, events jsonb)
       ${overwrite ? 'ON CONFLICT (application_id, url) DO UPDATE SET events = EXCLUDED.events' : 'ON CONFLICT DO NOTHING'}
       RETURNING 1`,
      [applicationId, JSON.stringify(rows)],
    );
    return inserted.length;
  },
};

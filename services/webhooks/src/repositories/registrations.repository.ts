/** All SQL about registered webhooks; every statement is scoped to one application. */
import { countAffected, type Queryable } from '@collab/shared';
import type { RegistrationRow } from '../entities/index.js';

const COLUMNS = `r.id, r.application_id AS "applicationId", r.url, r.events, r.created_at AS "createdAt"`;

export const registrationsRepository = {
  /** Creates the registration of this exact URL, or replaces its event types; returns its id. */
  async upsert(db: Queryable, applicationId: string, id: string, url: string, events: string[]): Promise<string> {
    const rows: { id: string }[] = await db.query(
      `INSERT INTO webhooks.registrations (id, application_id, url, events) VALUES ($1, $2, $3, $4)
       ON CONFLICT (application_id, url) DO UPDATE SET events = EXCLUDED.events
       RETURNING id`,
      [id, applicationId, url, events],
    );
    return rows[0].id;
  },

  list(db: Queryable, applicationId: string): Promise<RegistrationRow[]> {
    return db.query(`SELECT ${COLUMNS} FROM webhooks.registrations r WHERE r.application_id = $1 ORDER BY r.created_at, r.id`, [
      applicationId,
    ]);
  },

  /** The distinct URLs registered for an event type. */
  async urlsFor(db: Queryable, applicationId: string, type: string): Promise<string[]> {
    const rows: { url: string }[] = await db.query(
      `SELECT DISTINCT r.url FROM webhooks.registrations r WHERE r.application_id = $1 AND $2 = ANY(r.events)`,
      [applicationId, type],
    );
    return rows.map((row) => row.url);
  },

  delete(db: Queryable, applicationId: string, id: string): Promise<number> {
    return countAffected(db, `DELETE FROM webhooks.registrations WHERE application_id = $1 AND id = $2`, [applicationId, id]);
  },
};

/**
 * The column map of every mail table, taken from its entity: a row's fields are read (`select`,
 * `pick`) and written (`write`) through these, so that a column is named once, in its entity.
 */
import { entityColumns, sqlTable } from '@collab/shared';
import { MailEntity, ThreadOptOutEntity } from '../entities/index.js';

export const mailsTable = sqlTable('mail.mails', 'm', entityColumns(MailEntity));
export const optOutsTable = sqlTable('mail.thread_opt_outs', 'o', entityColumns(ThreadOptOutEntity));

/** What repositories need from TypeORM: a query method, from the data source or a transaction. */
export type { Queryable as Db } from '@collab/shared';

/** Postgres unique_violation. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string }).code === '23505' || (error as { driverError?: { code?: string } }).driverError?.code === '23505';
}

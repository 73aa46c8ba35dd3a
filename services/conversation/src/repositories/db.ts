/** What repositories need from TypeORM: a query method, from the data source or a transaction. */
export interface Db {
  // TypeORM's own signature returns any; repositories type their rows at the call site.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query(sql: string, parameters?: unknown[]): Promise<any>;
}

/** Postgres unique_violation. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string }).code === '23505' || (error as { driverError?: { code?: string } }).driverError?.code === '23505';
}

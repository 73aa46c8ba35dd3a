/** What repositories need from TypeORM: a query method, from the data source or a transaction. */
export type { Queryable as Db } from '@collab/shared';

/** The Postgres schema that holds identity's tables. */
export const IDENTITY_SCHEMA = 'identity';

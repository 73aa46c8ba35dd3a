import { CreateIdentitySchema1763700000000 } from './1763700000000-create-identity-schema.js';

/** Every identity migration, oldest first. */
export const identityMigrations = [CreateIdentitySchema1763700000000];

import { CreateMailSchema1795855413377 } from './1795855413377-create-mail-schema.js';

/** Every mail migration, oldest first. */
export const mailMigrations = [CreateMailSchema1795855413377];

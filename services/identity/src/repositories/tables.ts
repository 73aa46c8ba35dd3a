/**
 * The column map of every identity table, taken from its entity: a row's fields are read
 * (`select`, `pick`) and written (`write`) through these, so that a column is named once, in its
 * entity. Reads that answer another shape (a dump's field names, a JSON answer) name that shape.
 */
import { entityColumns, sqlTable } from '@collab/shared';
import {
  ApplicationEntity,
  BatchEntity,
  CustomerEntity,
  DurablePresenceEntity,
  GroupEntity,
  GroupMemberEntity,
  ImportChunkEntity,
  ImportFileChunkEntity,
  ImportMappingEntity,
  ImportRecordEntity,
  SessionEntity,
  UserEntity,
  UserPreferencesEntity,
} from '../entities/index.js';

export const customersTable = sqlTable('identity.customers', 'c', entityColumns(CustomerEntity));
export const applicationsTable = sqlTable('identity.applications', 'a', entityColumns(ApplicationEntity));
export const sessionsTable = sqlTable('identity.sessions', 's', entityColumns(SessionEntity));
export const usersTable = sqlTable('identity.users', 'u', entityColumns(UserEntity));
export const groupsTable = sqlTable('identity.groups', 'g', entityColumns(GroupEntity));
export const membersTable = sqlTable('identity.group_members', 'm', entityColumns(GroupMemberEntity));
export const preferencesTable = sqlTable('identity.user_preferences', 'p', entityColumns(UserPreferencesEntity));
export const durablePresenceTable = sqlTable('identity.durable_presence', 'dp', entityColumns(DurablePresenceEntity));
export const batchesTable = sqlTable('identity.batches', 'b', entityColumns(BatchEntity));
export const importsTable = sqlTable('identity.imports', 'i', entityColumns(ImportRecordEntity));
export const importChunksTable = sqlTable('identity.import_chunks', 'ic', entityColumns(ImportChunkEntity));
export const importFileChunksTable = sqlTable('identity.import_file_chunks', 'fc', entityColumns(ImportFileChunkEntity));
export const importMappingsTable = sqlTable('identity.import_mappings', 'im', entityColumns(ImportMappingEntity));

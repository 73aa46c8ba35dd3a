import { outboxTableMigration } from '@collab/shared/storage';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The outbox that records each deletion with it, for the cascade into the other services. */
export class RecordDeletionsInOutbox1795320000000 implements MigrationInterface {
  name = 'RecordDeletionsInOutbox1795320000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of outboxTableMigration('identity').up) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const statement of outboxTableMigration('identity').down) await queryRunner.query(statement);
  }
}

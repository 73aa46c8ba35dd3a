import { outboxTableMigration } from '@collab/shared/storage';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The outbox that records each notification's notification-created event with it. */
export class RecordEventsInOutbox1795430000001 implements MigrationInterface {
  name = 'RecordEventsInOutbox1795430000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of outboxTableMigration('notification').up) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const statement of outboxTableMigration('notification').down) await queryRunner.query(statement);
  }
}

import { outboxTableMigration } from '@collab/shared/storage';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The outbox that records each new message's event with it, for the webhooks and the notifications it causes. */
export class RecordEventsInOutbox1795400000001 implements MigrationInterface {
  name = 'RecordEventsInOutbox1795400000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of outboxTableMigration('conversation').up) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const statement of outboxTableMigration('conversation').down) await queryRunner.query(statement);
  }
}

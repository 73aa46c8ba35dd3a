import { idempotencyKeyTableMigration } from '@collab/shared/storage';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The Idempotency-Keys of the notification writes that take one, stored in the same transaction as the write. */
export class RecordIdempotencyKeys1795600000000 implements MigrationInterface {
  name = 'RecordIdempotencyKeys1795600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of idempotencyKeyTableMigration('notification').up) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const statement of idempotencyKeyTableMigration('notification').down) await queryRunner.query(statement);
  }
}

import { applicationPurgeTombstonesMigration } from '@collab/shared/storage';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Completed application deletions stay as tombstones, so that late work for a deleted application is refused. */
export class KeepApplicationPurgeTombstones1795856925273 implements MigrationInterface {
  name = 'KeepApplicationPurgeTombstones1795856925273';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of applicationPurgeTombstonesMigration('webhooks').up) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const statement of applicationPurgeTombstonesMigration('webhooks').down) await queryRunner.query(statement);
  }
}

import { applicationPurgeTombstonesMigration } from '@collab/shared/storage';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Completed application deletions stay as tombstones, so that late work for a deleted application is refused. */
export class KeepApplicationPurgeTombstones1795856924721 implements MigrationInterface {
  name = 'KeepApplicationPurgeTombstones1795856924721';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of applicationPurgeTombstonesMigration('conversation').up) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const statement of applicationPurgeTombstonesMigration('conversation').down) await queryRunner.query(statement);
  }
}

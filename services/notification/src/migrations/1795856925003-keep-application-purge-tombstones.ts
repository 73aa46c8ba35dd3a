import { applicationPurgeTombstonesMigration } from '@collab/shared/storage';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Completed application deletions stay as tombstones, so that late work for a deleted application is refused. */
export class KeepApplicationPurgeTombstones1795856925003 implements MigrationInterface {
  name = 'KeepApplicationPurgeTombstones1795856925003';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of applicationPurgeTombstonesMigration('notification').up) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const statement of applicationPurgeTombstonesMigration('notification').down) await queryRunner.query(statement);
  }
}

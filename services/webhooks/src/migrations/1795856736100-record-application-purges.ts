import { applicationPurgesTableMigration } from '@collab/shared/storage';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Application deletions that reached webhooks, kept until their purge completed (re-queued when Redis lost the job). */
export class RecordApplicationPurges1795856736100 implements MigrationInterface {
  name = 'RecordApplicationPurges1795856736100';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of applicationPurgesTableMigration('webhooks').up) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const statement of applicationPurgesTableMigration('webhooks').down) await queryRunner.query(statement);
  }
}

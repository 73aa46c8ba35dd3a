import { applicationPurgesTableMigration } from '@collab/shared/storage';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Application deletions that reached notification, kept until their purge completed (re-queued when Redis lost the job). */
export class RecordApplicationPurges1795310442825 implements MigrationInterface {
  name = 'RecordApplicationPurges1795310442825';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of applicationPurgesTableMigration('notification').up) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const statement of applicationPurgesTableMigration('notification').down) await queryRunner.query(statement);
  }
}

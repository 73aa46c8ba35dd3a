import { applicationPurgesTableMigration } from '@collab/shared/storage';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Application deletions that reached conversation, kept until their purge completed (re-queued when Redis lost the job). */
export class RecordApplicationPurges1795310439236 implements MigrationInterface {
  name = 'RecordApplicationPurges1795310439236';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of applicationPurgesTableMigration('conversation').up) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const statement of applicationPurgesTableMigration('conversation').down) await queryRunner.query(statement);
  }
}

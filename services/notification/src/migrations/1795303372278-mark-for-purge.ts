import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Notifications a deletion cascade reached: invisible at once, removed by purge jobs. */
export class MarkForPurge1795303372278 implements MigrationInterface {
  name = 'MarkForPurge1795303372278';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "notification"."notifications" ADD "purging_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`CREATE INDEX "notifications_purging_idx" ON "notification"."notifications" ("application_id") WHERE "purging_at" IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "notification"."notifications_purging_idx"`);
    await queryRunner.query(`ALTER TABLE "notification"."notifications" DROP COLUMN "purging_at"`);
  }
}

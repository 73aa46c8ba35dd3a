import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A rotated application secret stays valid for a grace period (SECRET_ROTATION_GRACE_HOURS), so
 * that a customer can roll the new one out to its servers without an outage: the previous secret
 * is kept sealed beside the current one, with the moment it stops being accepted. Both are set
 * or both are null.
 */
export class KeepPreviousApplicationSecret1795600000001 implements MigrationInterface {
  name = 'KeepPreviousApplicationSecret1795600000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."applications" ADD "previous_secret_encrypted" text`);
    await queryRunner.query(`ALTER TABLE "identity"."applications" ADD "previous_secret_expires_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(
      `ALTER TABLE "identity"."applications" ADD CONSTRAINT "applications_previous_secret_check" CHECK (num_nulls(previous_secret_encrypted, previous_secret_expires_at) <> 1)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."applications" DROP CONSTRAINT "applications_previous_secret_check"`);
    await queryRunner.query(`ALTER TABLE "identity"."applications" DROP COLUMN "previous_secret_expires_at"`);
    await queryRunner.query(`ALTER TABLE "identity"."applications" DROP COLUMN "previous_secret_encrypted"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A file's upload status, as message attachments show it: every file uploaded here is whole
 * (`uploaded`), but a file imported from a customer dump without its bytes is kept as a failed
 * upload, as the original showed uploads that never completed.
 */
export class RecordUploadStatus1795700000000 implements MigrationInterface {
  name = 'RecordUploadStatus1795700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "conversation"."files" ADD "upload_status" text NOT NULL DEFAULT 'uploaded'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "conversation"."files" DROP COLUMN "upload_status"`);
  }
}

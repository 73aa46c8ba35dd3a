import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rows a deletion cascade reached: invisible at once (counts and totals included), removed
 * afterwards by purge jobs in bounded batches.
 */
export class MarkForPurge1795303284448 implements MigrationInterface {
  name = 'MarkForPurge1795303284448';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "conversation"."threads" ADD "purging_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`ALTER TABLE "conversation"."messages" ADD "purging_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`ALTER TABLE "conversation"."files" ADD "purging_at" TIMESTAMP WITH TIME ZONE`);
    // A deleted user's reactions are removed at once, found by user.
    await queryRunner.query(`CREATE INDEX "message_reactions_user_idx" ON "conversation"."message_reactions" ("user_id")`);
    // Purge jobs find what is left to remove through these; they stay tiny when nothing is.
    await queryRunner.query(`CREATE INDEX "threads_purging_idx" ON "conversation"."threads" ("application_id") WHERE "purging_at" IS NOT NULL`);
    await queryRunner.query(`CREATE INDEX "messages_purging_idx" ON "conversation"."messages" ("application_id") WHERE "purging_at" IS NOT NULL`);
    await queryRunner.query(`CREATE INDEX "files_purging_idx" ON "conversation"."files" ("application_id") WHERE "purging_at" IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "conversation"."files_purging_idx"`);
    await queryRunner.query(`DROP INDEX "conversation"."message_reactions_user_idx"`);
    await queryRunner.query(`DROP INDEX "conversation"."messages_purging_idx"`);
    await queryRunner.query(`DROP INDEX "conversation"."threads_purging_idx"`);
    await queryRunner.query(`ALTER TABLE "conversation"."files" DROP COLUMN "purging_at"`);
    await queryRunner.query(`ALTER TABLE "conversation"."messages" DROP COLUMN "purging_at"`);
    await queryRunner.query(`ALTER TABLE "conversation"."threads" DROP COLUMN "purging_at"`);
  }
}

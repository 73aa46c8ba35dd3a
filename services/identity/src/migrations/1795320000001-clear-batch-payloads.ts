import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A batch's record keeps its body (users' names and e-mails) only until the batch is finished:
 * afterwards only its state and outcome are read, and the body must not outlive a user's
 * deletion. The bodies of batches already finished are cleared. `down` cannot bring them back: it
 * leaves those records an empty body.
 */
export class ClearBatchPayloads1795320000001 implements MigrationInterface {
  name = 'ClearBatchPayloads1795320000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."batches" ALTER COLUMN "payload" DROP NOT NULL`);
    await queryRunner.query(`UPDATE "identity"."batches" SET "payload" = NULL WHERE "finished_at" IS NOT NULL`);
    await queryRunner.query(`ALTER TABLE "identity"."batches" ADD CONSTRAINT "batches_payload_check" CHECK ((payload IS NULL) = (finished_at IS NOT NULL))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."batches" DROP CONSTRAINT "batches_payload_check"`);
    await queryRunner.query(`UPDATE "identity"."batches" SET "payload" = '{}' WHERE "payload" IS NULL`);
    await queryRunner.query(`ALTER TABLE "identity"."batches" ALTER COLUMN "payload" SET NOT NULL`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Batches recorded before POST /v1/batch answers: re-queued when Redis lost their job, their outcome read by GET /v1/batch/<jobID>. */
export class RecordBatches1795310436605 implements MigrationInterface {
  name = 'RecordBatches1795310436605';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "identity"."batches" ("job_id" uuid NOT NULL, "application_id" uuid NOT NULL, "payload" jsonb NOT NULL, "state" text NOT NULL DEFAULT 'waiting', "message" text, "error" jsonb, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "finished_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "batches_state_check" CHECK (state IN ('waiting', 'active', 'completed', 'failed')), CONSTRAINT "batches_finished_check" CHECK ((finished_at IS NULL) = (state IN ('waiting', 'active'))), CONSTRAINT "PK_042ec09055b05c1fe9006828909" PRIMARY KEY ("job_id"))`);
    await queryRunner.query(`CREATE INDEX "batches_application_idx" ON "identity"."batches" ("application_id")`);
    await queryRunner.query(`CREATE INDEX "batches_finished_idx" ON "identity"."batches" ("finished_at")`);
    await queryRunner.query(`ALTER TABLE "identity"."batches" ADD CONSTRAINT "FK_5263f2a84dea74b9ece2bc0aabe" FOREIGN KEY ("application_id") REFERENCES "identity"."applications"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."batches" DROP CONSTRAINT "FK_5263f2a84dea74b9ece2bc0aabe"`);
    await queryRunner.query(`DROP INDEX "identity"."batches_finished_idx"`);
    await queryRunner.query(`DROP INDEX "identity"."batches_application_idx"`);
    await queryRunner.query(`DROP TABLE "identity"."batches"`);
  }
}

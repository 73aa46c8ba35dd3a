import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Imports of customer dumps: each import's record (progress, counts, conflicts, outcome), the
 * dump itself in 1 MiB chunks until the import has finished (so that any worker replica can read
 * it, and an interrupted import can read it again), and the mapping from the dump's internal
 * UUIDs to the ids and references of this server's rows, per customer, so that a later import
 * or a resumed one names the rows already imported.
 */
export class RecordImports1795700000000 implements MigrationInterface {
  name = 'RecordImports1795700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "identity"."imports" ("id" uuid NOT NULL, "customer_id" uuid NOT NULL, "state" text NOT NULL DEFAULT 'waiting', "overwrite" boolean NOT NULL DEFAULT false, "dump_bytes" bigint NOT NULL, "bytes_read" bigint NOT NULL DEFAULT '0', "tables_done" text array NOT NULL DEFAULT '{}', "counts" jsonb NOT NULL DEFAULT '{}', "skipped" jsonb NOT NULL DEFAULT '{}', "conflicts" jsonb NOT NULL DEFAULT '[]', "error" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "started_at" TIMESTAMP WITH TIME ZONE, "finished_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "imports_state_check" CHECK (state IN ('waiting', 'active', 'completed', 'failed')), CONSTRAINT "PK_ea10c62f5eb1d75e83d8b5225db" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "imports_customer_idx" ON "identity"."imports" ("customer_id", "created_at")`);
    await queryRunner.query(`CREATE TABLE "identity"."import_chunks" ("import_id" uuid NOT NULL, "seq" integer NOT NULL, "data" bytea NOT NULL, CONSTRAINT "PK_17be9951f9d1f93f12d19a577d8" PRIMARY KEY ("import_id", "seq"))`);
    await queryRunner.query(`CREATE TABLE "identity"."import_mappings" ("customer_id" uuid NOT NULL, "kind" text NOT NULL, "original_id" uuid NOT NULL, "application_id" uuid NOT NULL, "external_id" text NOT NULL, "ref" text, "parent_ref" text, CONSTRAINT "PK_3432ad84e5a90bde834fd7de96c" PRIMARY KEY ("customer_id", "kind", "original_id"))`);
    await queryRunner.query(`ALTER TABLE "identity"."import_chunks" ADD CONSTRAINT "FK_063de3b8d36d5e547605d30f87f" FOREIGN KEY ("import_id") REFERENCES "identity"."imports"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."import_chunks" DROP CONSTRAINT "FK_063de3b8d36d5e547605d30f87f"`);
    await queryRunner.query(`DROP TABLE "identity"."import_mappings"`);
    await queryRunner.query(`DROP TABLE "identity"."import_chunks"`);
    await queryRunner.query(`DROP INDEX "identity"."imports_customer_idx"`);
    await queryRunner.query(`DROP TABLE "identity"."imports"`);
  }
}

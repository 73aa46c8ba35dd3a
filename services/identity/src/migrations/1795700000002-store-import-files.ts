import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The bytes of a dump's files (the blobs of its `files` table, which a SQL dump does not hold),
 * given with the dump by `npm run import -- <dump> --files DIR`: stored beside the dump in 1 MiB
 * chunks until the import has finished, so that any worker replica can hand them to the
 * conversation service, again after a crash. An import records whether blobs were given, so that
 * its report can tell a blob missing from the directory from an import that had none.
 */
export class StoreImportFiles1795700000002 implements MigrationInterface {
  name = 'StoreImportFiles1795700000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."imports" ADD "with_files" boolean NOT NULL DEFAULT false`);
    await queryRunner.query(
      `CREATE TABLE "identity"."import_file_chunks" ("import_id" uuid NOT NULL, "file_id" uuid NOT NULL, "seq" integer NOT NULL, "data" bytea NOT NULL, CONSTRAINT "PK_import_file_chunks" PRIMARY KEY ("import_id", "file_id", "seq"))`,
    );
    // Written once, read once, deleted when the import ends: not worth compressing.
    await queryRunner.query(`ALTER TABLE "identity"."import_file_chunks" ALTER COLUMN "data" SET STORAGE EXTERNAL`);
    await queryRunner.query(
      `ALTER TABLE "identity"."import_file_chunks" ADD CONSTRAINT "FK_572e250ea7659cc317163eb9df9" FOREIGN KEY ("import_id") REFERENCES "identity"."imports"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."import_file_chunks" DROP CONSTRAINT "FK_572e250ea7659cc317163eb9df9"`);
    await queryRunner.query(`DROP TABLE "identity"."import_file_chunks"`);
    await queryRunner.query(`ALTER TABLE "identity"."imports" DROP COLUMN "with_files"`);
  }
}

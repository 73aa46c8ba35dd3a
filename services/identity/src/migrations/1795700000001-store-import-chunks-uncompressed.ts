import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A stored dump's chunks are written once and read once or twice, then deleted when the import
 * ends: compressing them (PostgreSQL's default for large values) cost more than half of storing
 * a dump and a decompression on every read, for space held only for the import's duration.
 */
export class StoreImportChunksUncompressed1795700000001 implements MigrationInterface {
  name = 'StoreImportChunksUncompressed1795700000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."import_chunks" ALTER COLUMN "data" SET STORAGE EXTERNAL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."import_chunks" ALTER COLUMN "data" SET STORAGE EXTENDED`);
  }
}

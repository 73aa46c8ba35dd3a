import type { MigrationInterface, QueryRunner } from 'typeorm';

/** GIN indexes for the containment filters of GET /v1/threads and GET /v1/messages. */
export class AddFilterIndexes1795301400000 implements MigrationInterface {
  name = 'AddFilterIndexes1795301400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "threads_location_idx" ON "conversation"."threads" USING GIN ("location" jsonb_path_ops)`);
    await queryRunner.query(`CREATE INDEX "threads_metadata_idx" ON "conversation"."threads" USING GIN ("metadata" jsonb_path_ops)`);
    await queryRunner.query(`CREATE INDEX "messages_metadata_idx" ON "conversation"."messages" USING GIN ("metadata" jsonb_path_ops)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "conversation"."messages_metadata_idx"`);
    await queryRunner.query(`DROP INDEX "conversation"."threads_metadata_idx"`);
    await queryRunner.query(`DROP INDEX "conversation"."threads_location_idx"`);
  }
}

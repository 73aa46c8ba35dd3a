import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The thread statistics (counts, repliers in order of their first message) read per thread from
 * this index in its order, without touching the table or sorting every message of the thread.
 */
export class IndexThreadStats1795900000000 implements MigrationInterface {
  name = 'IndexThreadStats1795900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX "messages_thread_stats_idx" ON "conversation"."messages" ("thread_id", "type", "author_id", "created_at", "internal_id") INCLUDE ("deleted_at") WHERE "purging_at" IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "conversation"."messages_thread_stats_idx"`);
  }
}

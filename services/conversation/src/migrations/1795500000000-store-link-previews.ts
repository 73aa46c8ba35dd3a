import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Link previews are generated now: one row per (message, URL), so that two runs storing the same
 * URL upsert one row, and a `seq` that keeps the order they were stored in. The unique key leads
 * with message_id, so it replaces the index on message_id.
 */
export class StoreLinkPreviews1795500000000 implements MigrationInterface {
  name = 'StoreLinkPreviews1795500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Rows imported before the key existed may repeat a URL: one of them stays (a hidden one if any).
    await queryRunner.query(`DELETE FROM "conversation"."message_link_previews" p
      USING "conversation"."message_link_previews" other
      WHERE p.message_id = other.message_id AND p.url = other.url
        AND (p.hidden, p.id) < (other.hidden, other.id)`);
    await queryRunner.query(`DROP INDEX "conversation"."message_link_previews_message_idx"`);
    await queryRunner.query(`ALTER TABLE "conversation"."message_link_previews" ADD "seq" BIGSERIAL NOT NULL`);
    await queryRunner.query(
      `ALTER TABLE "conversation"."message_link_previews" ADD CONSTRAINT "message_link_previews_message_url_key" UNIQUE ("message_id", "url")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "conversation"."message_link_previews" DROP CONSTRAINT "message_link_previews_message_url_key"`);
    await queryRunner.query(`ALTER TABLE "conversation"."message_link_previews" DROP COLUMN "seq"`);
    await queryRunner.query(`CREATE INDEX "message_link_previews_message_idx" ON "conversation"."message_link_previews" ("message_id")`);
  }
}

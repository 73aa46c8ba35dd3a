import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Notifications created by activity besides the external ones: replies, thread actions and
 * reactions, each kind with what it stores, and one per recipient per conversation outbox entry
 * that caused it. The rows there were are all external.
 */
export class NotificationsFromActivity1795430000000 implements MigrationInterface {
  name = 'NotificationsFromActivity1795430000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "notification"."notifications" ADD "kind" text NOT NULL DEFAULT 'external'`);
    await queryRunner.query(`ALTER TABLE "notification"."notifications" ALTER COLUMN "kind" DROP DEFAULT`);
    await queryRunner.query(`ALTER TABLE "notification"."notifications" ALTER COLUMN "template" DROP NOT NULL`);
    await queryRunner.query(`ALTER TABLE "notification"."notifications" ALTER COLUMN "url" DROP NOT NULL`);
    await queryRunner.query(`ALTER TABLE "notification"."notifications" ADD "message_ref" text`);
    await queryRunner.query(`ALTER TABLE "notification"."notifications" ADD "thread_ref" text`);
    await queryRunner.query(`ALTER TABLE "notification"."notifications" ADD "reply_actions" jsonb`);
    await queryRunner.query(`ALTER TABLE "notification"."notifications" ADD "thread_action_type" text`);
    await queryRunner.query(`ALTER TABLE "notification"."notifications" ADD "reaction" text`);
    await queryRunner.query(`ALTER TABLE "notification"."notifications" ADD "aggregation_key" text`);
    await queryRunner.query(`ALTER TABLE "notification"."notifications" ADD "source_id" uuid`);
    await queryRunner.query(
      `ALTER TABLE "notification"."notifications" ADD CONSTRAINT "notifications_source_recipient_key" UNIQUE ("application_id", "source_id", "recipient_id")`,
    );
    await queryRunner.query(`ALTER TABLE "notification"."notifications" ADD CONSTRAINT "notifications_kind_check" CHECK ((kind = 'external' AND template IS NOT NULL AND url IS NOT NULL)
  OR (kind = 'reply' AND message_ref IS NOT NULL AND thread_ref IS NOT NULL AND reply_actions IS NOT NULL)
  OR (kind = 'thread_action' AND message_ref IS NOT NULL AND thread_ref IS NOT NULL AND thread_action_type IS NOT NULL)
  OR (kind = 'reaction' AND message_ref IS NOT NULL AND thread_ref IS NOT NULL AND reaction IS NOT NULL AND aggregation_key IS NOT NULL))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // The activity notifications cannot be kept without their columns.
    await queryRunner.query(`DELETE FROM "notification"."notifications" WHERE "kind" <> 'external'`);
    await queryRunner.query(`ALTER TABLE "notification"."notifications" DROP CONSTRAINT "notifications_kind_check"`);
    await queryRunner.query(`ALTER TABLE "notification"."notifications" DROP CONSTRAINT "notifications_source_recipient_key"`);
    for (const column of ['source_id', 'aggregation_key', 'reaction', 'thread_action_type', 'reply_actions', 'thread_ref', 'message_ref', 'kind'])
      await queryRunner.query(`ALTER TABLE "notification"."notifications" DROP COLUMN "${column}"`);
    await queryRunner.query(`ALTER TABLE "notification"."notifications" ALTER COLUMN "url" SET NOT NULL`);
    await queryRunner.query(`ALTER TABLE "notification"."notifications" ALTER COLUMN "template" SET NOT NULL`);
  }
}

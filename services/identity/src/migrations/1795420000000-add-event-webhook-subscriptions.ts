import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The event types an application's own webhook URL receives; null until set (the default types then). */
export class AddEventWebhookSubscriptions1795420000000 implements MigrationInterface {
  name = 'AddEventWebhookSubscriptions1795420000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."applications" ADD "event_webhook_subscriptions" text array`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."applications" DROP COLUMN "event_webhook_subscriptions"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The mails notifications cause (their sent-log) and the threads users unsubscribed from by mail. */
export class CreateMailSchema1795855413377 implements MigrationInterface {
  name = 'CreateMailSchema1795855413377';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "mail"."mails" ("id" uuid NOT NULL, "application_id" uuid NOT NULL, "notification_id" text NOT NULL, "kind" text NOT NULL, "recipient_id" text COLLATE "C" NOT NULL, "actor_id" text COLLATE "C" NOT NULL, "message_ref" text NOT NULL, "thread_ref" text NOT NULL, "reply_actions" text array, "thread_action_type" text, "link_base" text NOT NULL, "status" text NOT NULL DEFAULT 'pending', "outcome" text, "link_token" text NOT NULL, "send_after" TIMESTAMP WITH TIME ZONE NOT NULL, "sent_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "mails_notification_key" UNIQUE ("application_id", "notification_id"), CONSTRAINT "mails_link_token_key" UNIQUE ("link_token"), CONSTRAINT "PK_218248d7dfe1b739f06e2309349" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "mails_pending_idx" ON "mail"."mails" ("status", "send_after")`);
    await queryRunner.query(`CREATE INDEX "mails_thread_recipient_idx" ON "mail"."mails" ("application_id", "thread_ref", "recipient_id")`);
    await queryRunner.query(`CREATE TABLE "mail"."thread_opt_outs" ("application_id" uuid NOT NULL, "thread_ref" text NOT NULL, "user_id" text COLLATE "C" NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_e4e364769ad5a352d891bf1729f" PRIMARY KEY ("application_id", "thread_ref", "user_id"))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "mail"."thread_opt_outs"`);
    await queryRunner.query(`DROP INDEX "mail"."mails_thread_recipient_idx"`);
    await queryRunner.query(`DROP INDEX "mail"."mails_pending_idx"`);
    await queryRunner.query(`DROP TABLE "mail"."mails"`);
  }
}

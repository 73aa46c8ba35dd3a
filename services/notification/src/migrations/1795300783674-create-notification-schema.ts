import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Notifications sent by one user to another. */
export class CreateNotificationSchema1795300783674 implements MigrationInterface {
  name = 'CreateNotificationSchema1795300783674';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "notification"."notifications" ("internal_id" BIGSERIAL NOT NULL, "application_id" uuid NOT NULL, "external_id" text COLLATE "C" NOT NULL, "recipient_id" text COLLATE "C" NOT NULL, "actor_id" text COLLATE "C" NOT NULL, "template" text NOT NULL, "url" text NOT NULL, "icon_url" text, "extra_classnames" text, "metadata" jsonb NOT NULL DEFAULT '{}', "read_status" text NOT NULL DEFAULT 'unread', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "notifications_application_external_id_key" UNIQUE ("application_id", "external_id"), CONSTRAINT "PK_454dd0e8218f868df3d93d6d462" PRIMARY KEY ("internal_id"))`);
    await queryRunner.query(`CREATE INDEX "notifications_recipient_idx" ON "notification"."notifications" ("application_id", "recipient_id", "created_at", "internal_id")`);
    await queryRunner.query(`CREATE INDEX "notifications_actor_idx" ON "notification"."notifications" ("application_id", "actor_id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "notification"."notifications_actor_idx"`);
    await queryRunner.query(`DROP INDEX "notification"."notifications_recipient_idx"`);
    await queryRunner.query(`DROP TABLE "notification"."notifications"`);
  }
}

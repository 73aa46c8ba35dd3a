import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Registered webhooks, recorded events and their deliveries. */
export class CreateWebhooksSchema1795400000000 implements MigrationInterface {
  name = 'CreateWebhooksSchema1795400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "webhooks"."registrations" ("id" uuid NOT NULL, "application_id" uuid NOT NULL, "url" text NOT NULL, "events" text array NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "registrations_application_url_key" UNIQUE ("application_id", "url"), CONSTRAINT "PK_6013e724d7b22929da9cd7282d1" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE TABLE "webhooks"."events" ("id" uuid NOT NULL, "application_id" uuid NOT NULL, "type" text NOT NULL, "payload" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_40731c7151fe4be3116e45ddf73" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "events_created_idx" ON "webhooks"."events" ("created_at")`);
    await queryRunner.query(`CREATE TABLE "webhooks"."deliveries" ("id" uuid NOT NULL, "event_id" uuid NOT NULL, "application_id" uuid NOT NULL, "url" text NOT NULL, "status" text NOT NULL, "attempts" integer NOT NULL DEFAULT '0', "last_status_code" integer, "last_error" text, "last_body" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT clock_timestamp(), "last_attempt_at" TIMESTAMP WITH TIME ZONE, "next_attempt_at" TIMESTAMP WITH TIME ZONE, "sending_job" text, CONSTRAINT "deliveries_event_url_key" UNIQUE ("event_id", "url"), CONSTRAINT "PK_a6ef225c5c5f0974e503bfb731f" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "deliveries_log_idx" ON "webhooks"."deliveries" ("application_id", "created_at", "id")`);
    await queryRunner.query(`CREATE INDEX "deliveries_due_idx" ON "webhooks"."deliveries" ("next_attempt_at")`);
    await queryRunner.query(`ALTER TABLE "webhooks"."deliveries" ADD CONSTRAINT "FK_6a9b04f909fedcc6438b48b90c1" FOREIGN KEY ("event_id") REFERENCES "webhooks"."events"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "webhooks"."deliveries" DROP CONSTRAINT "FK_6a9b04f909fedcc6438b48b90c1"`);
    await queryRunner.query(`DROP INDEX "webhooks"."deliveries_due_idx"`);
    await queryRunner.query(`DROP INDEX "webhooks"."deliveries_log_idx"`);
    await queryRunner.query(`DROP TABLE "webhooks"."deliveries"`);
    await queryRunner.query(`DROP INDEX "webhooks"."events_created_idx"`);
    await queryRunner.query(`DROP TABLE "webhooks"."events"`);
    await queryRunner.query(`DROP TABLE "webhooks"."registrations"`);
  }
}

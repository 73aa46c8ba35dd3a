import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Each attempt of a delivery with its answer, error and timing, removed with its delivery. */
export class RecordDeliveryAttempts1795869029875 implements MigrationInterface {
  name = 'RecordDeliveryAttempts1795869029875';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "webhooks"."delivery_attempts" ("delivery_id" uuid NOT NULL, "attempt" integer NOT NULL, "application_id" uuid NOT NULL, "started_at" TIMESTAMP WITH TIME ZONE NOT NULL, "duration_ms" integer NOT NULL, "status" text NOT NULL, "status_code" integer, "error" text, CONSTRAINT "PK_8f45eec1a24d272c677e5798b3b" PRIMARY KEY ("delivery_id", "attempt"))`);
    await queryRunner.query(`ALTER TABLE "webhooks"."delivery_attempts" ADD CONSTRAINT "FK_a9d7e7212c87084249a641ab455" FOREIGN KEY ("delivery_id") REFERENCES "webhooks"."deliveries"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "webhooks"."delivery_attempts" DROP CONSTRAINT "FK_a9d7e7212c87084249a641ab455"`);
    await queryRunner.query(`DROP TABLE "webhooks"."delivery_attempts"`);
  }
}

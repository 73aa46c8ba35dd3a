import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Application deletions that reached conversation, kept until their purge completed (re-queued when Redis lost the job). */
export class RecordApplicationPurges1795310439236 implements MigrationInterface {
  name = 'RecordApplicationPurges1795310439236';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "conversation"."application_purges" ("application_id" uuid NOT NULL, "request_id" text NOT NULL, "requested_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_47132fb86c48dc3eaca04ee8147" PRIMARY KEY ("application_id"))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "conversation"."application_purges"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Users' notification channels (decision 51); a user's row goes with the user. */
export class RecordUserPreferences1795855184420 implements MigrationInterface {
  name = 'RecordUserPreferences1795855184420';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "identity"."user_preferences" ("user_id" bigint NOT NULL, "application_id" uuid NOT NULL, "send_via_email" boolean NOT NULL DEFAULT true, "send_via_slack" boolean NOT NULL DEFAULT true, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_458057fa75b66e68a275647da2e" PRIMARY KEY ("user_id"))`);
    await queryRunner.query(`ALTER TABLE "identity"."user_preferences" ADD CONSTRAINT "FK_458057fa75b66e68a275647da2e" FOREIGN KEY ("user_id") REFERENCES "identity"."users"("internal_id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "identity"."user_preferences" DROP CONSTRAINT "FK_458057fa75b66e68a275647da2e"`);
    await queryRunner.query(`DROP TABLE "identity"."user_preferences"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Durable presence (PUT /v1/users/<ID>/presence with durable: true), removed with its user or group. */
export class RecordDurablePresence1795857832949 implements MigrationInterface {
  name = 'RecordDurablePresence1795857832949';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "identity"."durable_presence" ("group_id" bigint NOT NULL, "user_id" bigint NOT NULL, "location_key" text COLLATE "C" NOT NULL, "application_id" uuid NOT NULL, "location" jsonb NOT NULL, "last_present_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_durable_presence" PRIMARY KEY ("group_id", "user_id", "location_key"))`,
    );
    await queryRunner.query(`CREATE INDEX "durable_presence_user_idx" ON "identity"."durable_presence" ("user_id") `);
    await queryRunner.query(
      `ALTER TABLE "identity"."durable_presence" ADD CONSTRAINT "FK_630a4e386ee3b9cfcaa30340954" FOREIGN KEY ("group_id") REFERENCES "identity"."groups"("internal_id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "identity"."durable_presence" ADD CONSTRAINT "FK_895e13b7002675f0e91ea97cfd4" FOREIGN KEY ("user_id") REFERENCES "identity"."users"("internal_id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "identity"."durable_presence"`);
  }
}

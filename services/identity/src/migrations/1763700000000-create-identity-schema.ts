import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Customers, applications, users, groups, memberships and access-token sessions. */
export class CreateIdentitySchema1763700000000 implements MigrationInterface {
  name = 'CreateIdentitySchema1763700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "identity"."customers" ("id" uuid NOT NULL, "secret" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_133ec679a801fab5e070f73d3ea" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE TABLE "identity"."applications" ("id" uuid NOT NULL, "customer_id" uuid NOT NULL, "name" text NOT NULL, "secret" text NOT NULL, "icon_url" text, "event_webhook_url" text, "redirect_uri" text, "email_settings" jsonb NOT NULL DEFAULT '{}', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_938c0a27255637bde919591888f" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "applications_customer_idx" ON "identity"."applications" ("customer_id", "created_at")`);
    await queryRunner.query(`CREATE TABLE "identity"."users" ("internal_id" BIGSERIAL NOT NULL, "application_id" uuid NOT NULL, "external_id" text COLLATE "C" NOT NULL, "name" text, "email" text, "short_name" text, "profile_picture_url" text, "status" text NOT NULL DEFAULT 'active', "metadata" jsonb NOT NULL DEFAULT '{}', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "users_application_external_id_key" UNIQUE ("application_id", "external_id"), CONSTRAINT "PK_3e19dae4e05efa137eb87a48b44" PRIMARY KEY ("internal_id"))`);
    await queryRunner.query(`CREATE INDEX "users_metadata_idx" ON "identity"."users" USING GIN ("metadata" jsonb_path_ops)`);
    await queryRunner.query(`CREATE TABLE "identity"."groups" ("internal_id" BIGSERIAL NOT NULL, "application_id" uuid NOT NULL, "external_id" text COLLATE "C" NOT NULL, "name" text NOT NULL, "status" text NOT NULL DEFAULT 'active', "metadata" jsonb NOT NULL DEFAULT '{}', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "groups_application_external_id_key" UNIQUE ("application_id", "external_id"), CONSTRAINT "PK_87faae12ae7f41a347a6919670b" PRIMARY KEY ("internal_id"))`);
    await queryRunner.query(`CREATE TABLE "identity"."group_members" ("group_id" bigint NOT NULL, "user_id" bigint NOT NULL, "application_id" uuid NOT NULL, "added_seq" BIGSERIAL NOT NULL, CONSTRAINT "PK_f5939ee0ad233ad35e03f5c65c1" PRIMARY KEY ("group_id", "user_id"))`);
    await queryRunner.query(`CREATE INDEX "group_members_user_idx" ON "identity"."group_members" ("user_id", "added_seq")`);
    await queryRunner.query(`CREATE TABLE "identity"."sessions" ("id" uuid NOT NULL, "application_id" uuid NOT NULL, "issued_at" TIMESTAMP WITH TIME ZONE NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_3238ef96f18b355b671619111bc" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "sessions_application_idx" ON "identity"."sessions" ("application_id")`);
    await queryRunner.query(`ALTER TABLE "identity"."applications" ADD CONSTRAINT "FK_7ab97e23f4482c78e873c8424bb" FOREIGN KEY ("customer_id") REFERENCES "identity"."customers"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "identity"."users" ADD CONSTRAINT "FK_b81b1861e793ae1207cc2a074e7" FOREIGN KEY ("application_id") REFERENCES "identity"."applications"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "identity"."groups" ADD CONSTRAINT "FK_3ce6f95e212a48c86ce63de37e8" FOREIGN KEY ("application_id") REFERENCES "identity"."applications"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "identity"."group_members" ADD CONSTRAINT "FK_2c840df5db52dc6b4a1b0b69c6e" FOREIGN KEY ("group_id") REFERENCES "identity"."groups"("internal_id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "identity"."group_members" ADD CONSTRAINT "FK_20a555b299f75843aa53ff8b0ee" FOREIGN KEY ("user_id") REFERENCES "identity"."users"("internal_id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "identity"."sessions" ADD CONSTRAINT "FK_857620203e8197cb66cb247c123" FOREIGN KEY ("application_id") REFERENCES "identity"."applications"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "identity"."sessions"`);
    await queryRunner.query(`DROP TABLE "identity"."group_members"`);
    await queryRunner.query(`DROP TABLE "identity"."groups"`);
    await queryRunner.query(`DROP TABLE "identity"."users"`);
    await queryRunner.query(`DROP TABLE "identity"."applications"`);
    await queryRunner.query(`DROP TABLE "identity"."customers"`);
  }
}

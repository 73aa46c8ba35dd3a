import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Threads, messages, reactions, mentions, participants, files and attachments. */
export class CreateConversationSchema1795299835831 implements MigrationInterface {
  name = 'CreateConversationSchema1795299835831';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "conversation"."threads" ("internal_id" BIGSERIAL NOT NULL, "application_id" uuid NOT NULL, "external_id" text COLLATE "C" NOT NULL, "group_id" text COLLATE "C" NOT NULL, "name" text NOT NULL, "url" text NOT NULL, "location" jsonb NOT NULL, "metadata" jsonb NOT NULL DEFAULT '{}', "extra_classnames" text, "resolved_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "last_activity_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "threads_application_external_id_key" UNIQUE ("application_id", "external_id"), CONSTRAINT "PK_ae227e9ae986a64552e3ab3f074" PRIMARY KEY ("internal_id"))`);
    await queryRunner.query(`CREATE INDEX "threads_activity_idx" ON "conversation"."threads" ("application_id", "last_activity_at", "external_id")`);
    await queryRunner.query(`CREATE INDEX "threads_group_idx" ON "conversation"."threads" ("application_id", "group_id")`);
    await queryRunner.query(`CREATE TABLE "conversation"."messages" ("internal_id" BIGSERIAL NOT NULL, "application_id" uuid NOT NULL, "external_id" text COLLATE "C" NOT NULL, "thread_id" bigint NOT NULL, "author_id" text COLLATE "C" NOT NULL, "type" text NOT NULL DEFAULT 'user_message', "content" jsonb NOT NULL, "url" text, "icon_url" text, "translation_key" text, "extra_classnames" text, "metadata" jsonb NOT NULL DEFAULT '{}', "skip_link_previews" boolean NOT NULL DEFAULT false, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE, "deleted_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "messages_application_external_id_key" UNIQUE ("application_id", "external_id"), CONSTRAINT "PK_f144aa824863ee6209585b39485" PRIMARY KEY ("internal_id"))`);
    await queryRunner.query(`CREATE INDEX "messages_thread_created_idx" ON "conversation"."messages" ("thread_id", "created_at")`);
    await queryRunner.query(`CREATE INDEX "messages_application_created_idx" ON "conversation"."messages" ("application_id", "created_at", "external_id")`);
    await queryRunner.query(`CREATE INDEX "messages_author_idx" ON "conversation"."messages" ("application_id", "author_id")`);
    await queryRunner.query(`CREATE TABLE "conversation"."message_reactions" ("message_id" bigint NOT NULL, "user_id" text COLLATE "C" NOT NULL, "reaction" text NOT NULL, "reacted_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_405efd1bc25df76b345fc0ad967" PRIMARY KEY ("message_id", "user_id", "reaction"))`);
    await queryRunner.query(`CREATE TABLE "conversation"."message_mentions" ("message_id" bigint NOT NULL, "user_id" text COLLATE "C" NOT NULL, CONSTRAINT "PK_2b86ffdf34d7fb988951d8096b8" PRIMARY KEY ("message_id", "user_id"))`);
    await queryRunner.query(`CREATE INDEX "message_mentions_user_idx" ON "conversation"."message_mentions" ("user_id")`);
    await queryRunner.query(`CREATE TABLE "conversation"."thread_participants" ("thread_id" bigint NOT NULL, "user_id" text COLLATE "C" NOT NULL, "last_seen_at" TIMESTAMP WITH TIME ZONE, "subscribed" boolean NOT NULL DEFAULT false, "seq" BIGSERIAL NOT NULL, CONSTRAINT "PK_36d229ec51689a184711268fe09" PRIMARY KEY ("thread_id", "user_id"))`);
    await queryRunner.query(`CREATE INDEX "thread_participants_user_idx" ON "conversation"."thread_participants" ("user_id")`);
    await queryRunner.query(`CREATE TABLE "conversation"."files" ("id" uuid NOT NULL, "application_id" uuid NOT NULL, "owner_id" text COLLATE "C" NOT NULL, "name" text NOT NULL, "mime_type" text NOT NULL, "size" bigint NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_6c16b9093a142e0e7613b04a3d9" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "files_owner_idx" ON "conversation"."files" ("application_id", "owner_id")`);
    await queryRunner.query(`CREATE TABLE "conversation"."file_chunks" ("file_id" uuid NOT NULL, "seq" integer NOT NULL, "data" bytea NOT NULL, CONSTRAINT "PK_2b073e660a977e8bced304e2fad" PRIMARY KEY ("file_id", "seq"))`);
    await queryRunner.query(`CREATE TABLE "conversation"."message_attachments" ("message_id" bigint NOT NULL, "file_id" uuid NOT NULL, "seq" BIGSERIAL NOT NULL, CONSTRAINT "PK_542bea20091927eb79ee0ec18d3" PRIMARY KEY ("message_id", "file_id"))`);
    await queryRunner.query(`CREATE INDEX "message_attachments_file_idx" ON "conversation"."message_attachments" ("file_id")`);
    await queryRunner.query(`CREATE TABLE "conversation"."message_link_previews" ("id" uuid NOT NULL, "message_id" bigint NOT NULL, "url" text NOT NULL, "image_url" text, "title" text, "description" text, "hidden" boolean NOT NULL DEFAULT false, CONSTRAINT "PK_da61b148fdd4bad543cf1bf8af0" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "message_link_previews_message_idx" ON "conversation"."message_link_previews" ("message_id")`);
    await queryRunner.query(`ALTER TABLE "conversation"."messages" ADD CONSTRAINT "FK_bb3af7f695d50083e6523290d41" FOREIGN KEY ("thread_id") REFERENCES "conversation"."threads"("internal_id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "conversation"."message_reactions" ADD CONSTRAINT "FK_ce61e365d81a9dfc15cd36513b0" FOREIGN KEY ("message_id") REFERENCES "conversation"."messages"("internal_id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "conversation"."message_mentions" ADD CONSTRAINT "FK_704c2dc52c37d26393dae070253" FOREIGN KEY ("message_id") REFERENCES "conversation"."messages"("internal_id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "conversation"."thread_participants" ADD CONSTRAINT "FK_c0b642fb1e69a2d51ad4a427635" FOREIGN KEY ("thread_id") REFERENCES "conversation"."threads"("internal_id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "conversation"."file_chunks" ADD CONSTRAINT "FK_617e13364db5af550e924954530" FOREIGN KEY ("file_id") REFERENCES "conversation"."files"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "conversation"."message_attachments" ADD CONSTRAINT "FK_bf65c3db8657cef6197b68b8c88" FOREIGN KEY ("message_id") REFERENCES "conversation"."messages"("internal_id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "conversation"."message_attachments" ADD CONSTRAINT "FK_8b66fb69a696854d5ff08ae6e2d" FOREIGN KEY ("file_id") REFERENCES "conversation"."files"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "conversation"."message_link_previews" ADD CONSTRAINT "FK_c687e8548be341eadc72fc95e24" FOREIGN KEY ("message_id") REFERENCES "conversation"."messages"("internal_id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "conversation"."message_link_previews" DROP CONSTRAINT "FK_c687e8548be341eadc72fc95e24"`);
    await queryRunner.query(`ALTER TABLE "conversation"."message_attachments" DROP CONSTRAINT "FK_8b66fb69a696854d5ff08ae6e2d"`);
    await queryRunner.query(`ALTER TABLE "conversation"."message_attachments" DROP CONSTRAINT "FK_bf65c3db8657cef6197b68b8c88"`);
    await queryRunner.query(`ALTER TABLE "conversation"."file_chunks" DROP CONSTRAINT "FK_617e13364db5af550e924954530"`);
    await queryRunner.query(`ALTER TABLE "conversation"."thread_participants" DROP CONSTRAINT "FK_c0b642fb1e69a2d51ad4a427635"`);
    await queryRunner.query(`ALTER TABLE "conversation"."message_mentions" DROP CONSTRAINT "FK_704c2dc52c37d26393dae070253"`);
    await queryRunner.query(`ALTER TABLE "conversation"."message_reactions" DROP CONSTRAINT "FK_ce61e365d81a9dfc15cd36513b0"`);
    await queryRunner.query(`ALTER TABLE "conversation"."messages" DROP CONSTRAINT "FK_bb3af7f695d50083e6523290d41"`);
    await queryRunner.query(`DROP INDEX "conversation"."message_link_previews_message_idx"`);
    await queryRunner.query(`DROP TABLE "conversation"."message_link_previews"`);
    await queryRunner.query(`DROP INDEX "conversation"."message_attachments_file_idx"`);
    await queryRunner.query(`DROP TABLE "conversation"."message_attachments"`);
    await queryRunner.query(`DROP TABLE "conversation"."file_chunks"`);
    await queryRunner.query(`DROP INDEX "conversation"."files_owner_idx"`);
    await queryRunner.query(`DROP TABLE "conversation"."files"`);
    await queryRunner.query(`DROP INDEX "conversation"."thread_participants_user_idx"`);
    await queryRunner.query(`DROP TABLE "conversation"."thread_participants"`);
    await queryRunner.query(`DROP INDEX "conversation"."message_mentions_user_idx"`);
    await queryRunner.query(`DROP TABLE "conversation"."message_mentions"`);
    await queryRunner.query(`DROP TABLE "conversation"."message_reactions"`);
    await queryRunner.query(`DROP INDEX "conversation"."messages_author_idx"`);
    await queryRunner.query(`DROP INDEX "conversation"."messages_application_created_idx"`);
    await queryRunner.query(`DROP INDEX "conversation"."messages_thread_created_idx"`);
    await queryRunner.query(`DROP TABLE "conversation"."messages"`);
    await queryRunner.query(`DROP INDEX "conversation"."threads_group_idx"`);
    await queryRunner.query(`DROP INDEX "conversation"."threads_activity_idx"`);
    await queryRunner.query(`DROP TABLE "conversation"."threads"`);
  }
}

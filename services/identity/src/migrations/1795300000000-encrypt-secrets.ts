import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Secrets at rest: customers and applications keep their secret sealed in `secret_encrypted`.
 * A secret stored before this migration moves, unchanged, to `plaintext_secret`, and identity
 * encrypts it at its next start (domain/secrets.ts `prepareStoredSecrets`), idempotently: the key
 * belongs to identity's configuration, not to the migrate job, and a migration should not depend
 * on a secret. An older identity still running fails loudly on the renamed column rather than
 * writing plaintext.
 */
export class EncryptSecrets1795300000000 implements MigrationInterface {
  name = 'EncryptSecrets1795300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['customers', 'applications']) {
      await queryRunner.query(`ALTER TABLE "identity"."${table}" RENAME COLUMN "secret" TO "plaintext_secret"`);
      await queryRunner.query(`ALTER TABLE "identity"."${table}" ALTER COLUMN "plaintext_secret" DROP NOT NULL`);
      await queryRunner.query(`ALTER TABLE "identity"."${table}" ADD "secret_encrypted" text`);
      await queryRunner.query(
        `ALTER TABLE "identity"."${table}" ADD CONSTRAINT "${table}_one_secret_check" CHECK (num_nonnulls(secret_encrypted, plaintext_secret) = 1)`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Only identity's key turns an encrypted secret back into plaintext: refuse rather than lose it.
    const [{ encrypted }] = await queryRunner.query(
      `SELECT (SELECT count(*) FROM "identity"."customers" WHERE "secret_encrypted" IS NOT NULL)
            + (SELECT count(*) FROM "identity"."applications" WHERE "secret_encrypted" IS NOT NULL) AS encrypted`,
    );
    if (Number(encrypted) > 0) throw new Error(`${encrypted} secret(s) are encrypted; reverting would lose them`);
    for (const table of ['applications', 'customers']) {
      await queryRunner.query(`ALTER TABLE "identity"."${table}" DROP CONSTRAINT "${table}_one_secret_check"`);
      await queryRunner.query(`ALTER TABLE "identity"."${table}" DROP COLUMN "secret_encrypted"`);
      await queryRunner.query(`ALTER TABLE "identity"."${table}" ALTER COLUMN "plaintext_secret" SET NOT NULL`);
      await queryRunner.query(`ALTER TABLE "identity"."${table}" RENAME COLUMN "plaintext_secret" TO "secret"`);
    }
  }
}

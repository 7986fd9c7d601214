import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Grants1764470000000 implements MigrationInterface {
  name = 'Grants1764470000000';

  async up(q: QueryRunner): Promise<void> {
    // A revocation is kept until the grant could no longer be used anyway.
    await q.query(`
      CREATE TABLE grant_revocations (
        grant_id uuid PRIMARY KEY,
        revoked_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE personal_access_tokens (
        id text PRIMARY KEY,
        digest bytea NOT NULL,
        label text,
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE personal_access_tokens`);
    await q.query(`DROP TABLE grant_revocations`);
  }
}

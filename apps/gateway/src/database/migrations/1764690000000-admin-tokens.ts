import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Admin tokens of the management API (admin-api/README.md): minted by
 * `npm run admin -- console token`, stored as a SHA-256 digest only (the token
 * is shown once), with an optional expiry, revocable, and when each was last used.
 */
export class AdminTokens1764690000000 implements MigrationInterface {
  name = 'AdminTokens1764690000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE admin_tokens (
        id text PRIMARY KEY,
        digest bytea NOT NULL,
        label text,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz,
        revoked_at timestamptz,
        last_used_at timestamptz
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE admin_tokens`);
  }
}

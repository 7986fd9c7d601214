import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One-time login codes of the console (admin-api/README.md, "The login link"):
 * `npm start` prints one in a link; the console exchanges it once, within minutes,
 * for a browser session. Only its digest is stored; `used_at` makes it single use.
 */
export class AdminLoginCodes1764716000000 implements MigrationInterface {
  name = 'AdminLoginCodes1764716000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE admin_login_codes (
        id text PRIMARY KEY,
        digest bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE admin_login_codes`);
  }
}

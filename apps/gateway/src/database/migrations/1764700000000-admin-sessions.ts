import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Browser sessions of the management API (admin-api/README.md): a login with an
 * admin token makes one, held in an HttpOnly cookie; only its digest is stored.
 * It lives while its token does (revoking the token ends its sessions) and at
 * most its own lifetime.
 */
export class AdminSessions1764700000000 implements MigrationInterface {
  name = 'AdminSessions1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE admin_sessions (
        id text PRIMARY KEY,
        digest bytea NOT NULL,
        token_id text NOT NULL REFERENCES admin_tokens(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        ended_at timestamptz
      )`);
    await q.query(`CREATE INDEX admin_sessions_token ON admin_sessions (token_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE admin_sessions`);
  }
}

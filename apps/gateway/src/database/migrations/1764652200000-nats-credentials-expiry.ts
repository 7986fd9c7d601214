import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When an agent's NATS user expires (the `exp` of its JWT, `agent credentials --ttl`):
 * null for credentials that never expire, as every one issued before.
 */
export class NatsCredentialsExpiry1764652200000 implements MigrationInterface {
  name = 'NatsCredentialsExpiry1764652200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE nats_credentials ADD COLUMN expires_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE nats_credentials DROP COLUMN expires_at`);
  }
}

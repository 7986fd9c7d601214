import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The NATS users issued to agents' pods by the admin CLI (public keys only:
 * the seeds are never stored), so that all of an agent's credentials can be
 * listed and revoked at once.
 */
export class NatsCredentials1764510000000 implements MigrationInterface {
  name = 'NatsCredentials1764510000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE nats_credentials (
        user_key text PRIMARY KEY,
        agent_id text NOT NULL,
        issued_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz
      )`);
    await q.query(`CREATE INDEX nats_credentials_agent ON nats_credentials (agent_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE nats_credentials`);
  }
}

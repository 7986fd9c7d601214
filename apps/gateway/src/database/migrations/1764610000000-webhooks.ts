import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks (apps/gateway/src/webhooks/README.md): the registrations (secrets
 * encrypted, never in plain text), the outbox of deliveries (written in the
 * transaction of the state change it reports, claimed by one replica at a time
 * under a lease) and every attempt made.
 */
export class Webhooks1764610000000 implements MigrationInterface {
  name = 'Webhooks1764610000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhooks (
        id text PRIMARY KEY,
        agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        url text NOT NULL,
        events text[] NOT NULL,
        secret bytea NOT NULL,
        previous_secret bytea,
        previous_secret_expires_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        disabled_at timestamptz,
        disabled_reason text
      )`);
    await q.query(`CREATE INDEX webhooks_by_agent ON webhooks (agent_id) WHERE disabled_at IS NULL`);
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id text PRIMARY KEY,
        webhook_id text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        event_type text NOT NULL,
        payload text NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        lease_token uuid,
        lease_until timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        last_error text
      )`);
    await q.query(
      `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await q.query(`CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, created_at)`);
    await q.query(`
      CREATE TABLE webhook_attempts (
        id bigserial PRIMARY KEY,
        delivery_id text NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
        started_at timestamptz NOT NULL,
        duration_ms integer NOT NULL,
        outcome text NOT NULL,
        response_code integer,
        error text,
        replica text NOT NULL
      )`);
    await q.query(`CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_attempts`);
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhooks`);
  }
}

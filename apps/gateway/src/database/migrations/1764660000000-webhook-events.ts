import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks off the call path (webhooks/README.md):
 * - `webhook_events`: one row per call outcome (group-committed), fanned out to
 *   the matching webhooks' deliveries by the dispatcher, not by the call;
 * - `webhooks.owner`: the principal that made the webhook (`apikey:<id>`, a grant's
 *   task), null for the operator's; a principal's webhook hears only its own calls;
 * - the endpoint's health: failing since when, how many probes failed, when the next
 *   probe is due, the last error (retries back off per endpoint, not per delivery).
 */
export class WebhookEvents1764660000000 implements MigrationInterface {
  name = 'WebhookEvents1764660000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_events (
        id bigserial PRIMARY KEY,
        agent_id text NOT NULL,
        caller_id text,
        event_type text NOT NULL,
        payload text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`ALTER TABLE webhooks ADD COLUMN owner text`);
    await q.query(`ALTER TABLE webhooks ADD COLUMN failing_since timestamptz`);
    await q.query(`ALTER TABLE webhooks ADD COLUMN failures integer NOT NULL DEFAULT 0`);
    await q.query(`ALTER TABLE webhooks ADD COLUMN retry_at timestamptz`);
    await q.query(`ALTER TABLE webhooks ADD COLUMN last_error text`);
    await q.query(`CREATE INDEX webhooks_by_owner ON webhooks (agent_id, owner)`);
    // The claim takes each endpoint's oldest due deliveries (this index), never the oldest of all
    // (the old one: maintained on every delivery's insert and update for nothing).
    await q.query(`DROP INDEX webhook_deliveries_due`);
    await q.query(
      `CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id, next_attempt_at) WHERE status = 'pending'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook_deliveries_pending`);
    await q.query(
      `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await q.query(`DROP INDEX webhooks_by_owner`);
    for (const column of ['last_error', 'retry_at', 'failures', 'failing_since', 'owner']) {
      await q.query(`ALTER TABLE webhooks DROP COLUMN ${column}`);
    }
    await q.query(`DROP TABLE webhook_events`);
  }
}

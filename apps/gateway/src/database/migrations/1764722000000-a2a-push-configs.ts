import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A2A push notification configs (a2a/README.md, "Push notifications"): each is
 * an endpoint of the webhook outbox (a `webhooks` row, so claims, retries,
 * per-endpoint backoff, disabling, the SSRF guard and the metrics are the
 * webhooks'), bound to one task (`a2a_task_id`, gone with the task) and one
 * caller (`owner`), named by the client's `a2a_config_id`; the config's
 * `authentication` and `token` sealed like the secrets (`a2a_headers`).
 * `mcp_tasks.push`: the task has (had) a config, so its state changes are
 * written to the outbox; a task without one costs no statement.
 * `webhook_events.a2a_task_id`: the task a push event is for (its configs hear
 * it); `webhook_events.webhook_id`: the one config it is for (the state a new
 * config starts with), null for all of them.
 * `a2a_push_secrets`: each caller's signing secret per agent (sealed), and the
 * previous one while a rotation's window lasts (configs made meanwhile sign with both).
 */
export class A2aPushConfigs1764722000000 implements MigrationInterface {
  name = 'A2aPushConfigs1764722000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE mcp_tasks ADD COLUMN push boolean NOT NULL DEFAULT false`);
    await q.query(`
      ALTER TABLE webhooks
        ADD COLUMN a2a_task_id uuid REFERENCES mcp_tasks(id) ON DELETE CASCADE,
        ADD COLUMN a2a_config_id text,
        ADD COLUMN a2a_headers bytea`);
    await q.query(
      `CREATE UNIQUE INDEX webhooks_a2a_configs ON webhooks (a2a_task_id, a2a_config_id) WHERE a2a_task_id IS NOT NULL`,
    );
    await q.query(`ALTER TABLE webhook_events ADD COLUMN a2a_task_id uuid, ADD COLUMN webhook_id text`);
    await q.query(`
      CREATE TABLE a2a_push_secrets (
        agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        owner text NOT NULL,
        secret bytea NOT NULL,
        previous_secret bytea,
        previous_secret_expires_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (agent_id, owner)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE a2a_push_secrets`);
    await q.query(`ALTER TABLE webhook_events DROP COLUMN a2a_task_id, DROP COLUMN webhook_id`);
    await q.query(`DELETE FROM webhooks WHERE a2a_task_id IS NOT NULL`);
    await q.query(`DROP INDEX webhooks_a2a_configs`);
    await q.query(`ALTER TABLE webhooks DROP COLUMN a2a_task_id, DROP COLUMN a2a_config_id, DROP COLUMN a2a_headers`);
    await q.query(`ALTER TABLE mcp_tasks DROP COLUMN push`);
  }
}

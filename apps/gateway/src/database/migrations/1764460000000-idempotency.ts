import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Idempotency1764460000000 implements MigrationInterface {
  name = 'Idempotency1764460000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE idempotency_records (
        agent_id text NOT NULL,
        caller text NOT NULL,
        key text NOT NULL,
        fingerprint bytea NOT NULL,
        tool_id uuid NOT NULL,
        message jsonb NOT NULL,
        result text,
        created_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (agent_id, caller, key)
      )`);
    await q.query(`CREATE INDEX idempotency_records_expiry ON idempotency_records (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE idempotency_records`);
  }
}

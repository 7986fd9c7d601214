import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit trail (audit/README.md), in a schema of its own so that a
 * deployment can give the gateway's role INSERT and SELECT there and nothing
 * else (deploy/compose/postgres-roles.sh): rows chained per writer and day
 * (`hash = SHA-256(previous hash ‖ canonical row)`), the chains' anchors, and
 * the retention function, which drops whole chains and keeps their anchors.
 */
export class Audit1764720000000 implements MigrationInterface {
  name = 'Audit1764720000000';

  async up(q: QueryRunner): Promise<void> {
    // Made here where the migrating role may create schemas; compose's init script makes it for the owner beforehand.
    await q.query(`
      DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'audit') THEN CREATE SCHEMA audit; END IF;
      END $$`);
    await q.query(`
      CREATE TABLE audit.records (
        chain text NOT NULL,
        seq integer NOT NULL,
        kind text NOT NULL,
        at timestamptz NOT NULL,
        surface text,
        principal text,
        agent_id text,
        tool text,
        call_id text,
        outcome text,
        error_code text,
        duration_ms integer,
        pod_id text,
        replayed boolean,
        arguments_digest text,
        arguments jsonb,
        detail jsonb,
        prev_hash text NOT NULL,
        hash text NOT NULL,
        PRIMARY KEY (chain, seq)
      )`);
    await q.query(`CREATE INDEX audit_records_at ON audit.records (at)`);
    await q.query(`CREATE INDEX audit_records_agent_at ON audit.records (agent_id, at)`);
    await q.query(`CREATE INDEX audit_records_principal_at ON audit.records (principal, at)`);
    await q.query(`
      CREATE TABLE audit.anchors (
        chain text NOT NULL,
        seq integer NOT NULL,
        hash text NOT NULL,
        at timestamptz NOT NULL,
        dropped boolean NOT NULL DEFAULT false,
        PRIMARY KEY (chain, seq)
      )`);
    // Retention without DELETE for the gateway's role: whole chains of the days before the cutoff go,
    // the head of each stays as an anchor marked dropped.
    await q.query(`
      CREATE FUNCTION audit.drop_chains_before(cutoff date) RETURNS integer
      LANGUAGE sql SECURITY DEFINER SET search_path = audit, pg_temp AS $$
        WITH heads AS (
          SELECT DISTINCT ON (chain) chain, seq, hash FROM audit.records
          WHERE left(chain, 10) < to_char(cutoff, 'YYYY-MM-DD') ORDER BY chain, seq DESC
        ), kept AS (
          INSERT INTO audit.anchors (chain, seq, hash, at, dropped)
          SELECT chain, seq, hash, now(), true FROM heads
          ON CONFLICT (chain, seq) DO UPDATE SET dropped = true
          RETURNING 1
        ), gone AS (
          DELETE FROM audit.records WHERE left(chain, 10) < to_char(cutoff, 'YYYY-MM-DD') RETURNING 1
        )
        SELECT count(*)::integer FROM gone
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION audit.drop_chains_before(date)`);
    await q.query(`DROP TABLE audit.anchors`);
    await q.query(`DROP TABLE audit.records`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SSE streams of sessions, and the events they sent, so a client that lost a
 * stream resumes it with `Last-Event-ID` on any replica (streams/README.md).
 * Bound to their session (deleted with it), bounded in number and bytes per
 * stream by the writer, and in time by the purge.
 */
export class ResumableStreams1764620000000 implements MigrationInterface {
  name = 'ResumableStreams1764620000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE mcp_streams (
        id uuid PRIMARY KEY,
        session_id text NOT NULL REFERENCES mcp_sessions(id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('request', 'listen')),
        created_at timestamptz NOT NULL DEFAULT now(),
        ended_at timestamptz,
        attached_until timestamptz,
        touched_at timestamptz NOT NULL DEFAULT now(),
        dropped_through integer NOT NULL DEFAULT 0
      )`);
    await q.query(`CREATE INDEX mcp_streams_touched ON mcp_streams (touched_at)`);
    await q.query(`
      CREATE TABLE mcp_stream_events (
        stream_id uuid NOT NULL REFERENCES mcp_streams(id) ON DELETE CASCADE,
        seq integer NOT NULL,
        data text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (stream_id, seq)
      )`);
    await q.query(`CREATE INDEX mcp_stream_events_created ON mcp_stream_events (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE mcp_stream_events`);
    await q.query(`DROP TABLE mcp_streams`);
  }
}

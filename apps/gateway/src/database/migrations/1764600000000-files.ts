import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Uploaded files' metadata (the bytes are in FILES_STORAGE): who owns each file
 * (agent and caller), what it is, and when it expires (files/README.md).
 */
export class Files1764600000000 implements MigrationInterface {
  name = 'Files1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE files (
        id uuid PRIMARY KEY,
        agent_id text NOT NULL,
        caller text NOT NULL,
        filename text NOT NULL,
        content_type text NOT NULL,
        size bigint NOT NULL CHECK (size >= 0),
        sha256 bytea,
        state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'uploading', 'uploaded')),
        created_at timestamptz NOT NULL DEFAULT now(),
        upload_started_at timestamptz,
        uploaded_at timestamptz,
        expires_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX files_expiry ON files (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE files`);
  }
}

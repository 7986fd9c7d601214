import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The presign quota sums a caller's live files (files/README.md): by owner, not by a scan. */
export class FilesOwnerIndex1764640000000 implements MigrationInterface {
  name = 'FilesOwnerIndex1764640000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX files_owner ON files (agent_id, caller, expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX files_owner`);
  }
}

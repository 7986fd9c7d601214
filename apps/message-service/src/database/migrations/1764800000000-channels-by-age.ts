import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Retention looks at channels oldest first, from a cursor (retention/README.md): no scan of the table. */
export class ChannelsByAge1764800000000 implements MigrationInterface {
  name = 'ChannelsByAge1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX channels_created_at ON channels (created_at, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX channels_created_at`);
  }
}

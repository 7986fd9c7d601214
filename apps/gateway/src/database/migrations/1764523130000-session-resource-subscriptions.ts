import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The resources a 2025-11-25 session subscribed to (resources/subscribe): its GET stream hears their updates. */
export class SessionResourceSubscriptions1764523130000 implements MigrationInterface {
  name = 'SessionResourceSubscriptions1764523130000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE mcp_sessions ADD COLUMN resource_subscriptions text[] NOT NULL DEFAULT '{}'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE mcp_sessions DROP COLUMN resource_subscriptions`);
  }
}

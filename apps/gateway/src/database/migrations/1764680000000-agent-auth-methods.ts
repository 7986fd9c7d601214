import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How callers may prove who they are at an agent's endpoint, per agent: its
 * API keys, OAuth access tokens (when the gateway has OAUTH_ISSUERS), or both
 * (the default). Set with `npm run admin -- agent auth`.
 */
export class AgentAuthMethods1764680000000 implements MigrationInterface {
  name = 'AgentAuthMethods1764680000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE agents
        ADD COLUMN api_keys_enabled boolean NOT NULL DEFAULT true,
        ADD COLUMN oauth_enabled boolean NOT NULL DEFAULT true`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agents DROP COLUMN api_keys_enabled, DROP COLUMN oauth_enabled`);
  }
}

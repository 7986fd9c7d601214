import type { MigrationInterface, QueryRunner } from 'typeorm';

/** What else an agent registers besides tools: resources, resource templates and prompts. */
export class AgentResourcesPrompts1764490000000 implements MigrationInterface {
  name = 'AgentResourcesPrompts1764490000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE agents
        ADD COLUMN resources jsonb NOT NULL DEFAULT '[]',
        ADD COLUMN resource_templates jsonb NOT NULL DEFAULT '[]',
        ADD COLUMN prompts jsonb NOT NULL DEFAULT '[]'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agents DROP COLUMN resources, DROP COLUMN resource_templates, DROP COLUMN prompts`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who may read an agent's A2A card (a2a/README.md): anyone (`public`, the
 * default: a card is how A2A clients discover an agent), or only callers with a
 * credential for it (`private`, `agent update --a2a-card private`).
 */
export class A2aCard1764721000000 implements MigrationInterface {
  name = 'A2aCard1764721000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE agents ADD COLUMN a2a_card text NOT NULL DEFAULT 'public' CHECK (a2a_card IN ('public', 'private'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agents DROP COLUMN a2a_card`);
  }
}

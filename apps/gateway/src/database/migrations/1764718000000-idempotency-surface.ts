import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The surface whose shape an idempotency record's result text is in
 * (idempotency/README.md, "One key space, two shapes"): a key is shared by MCP
 * and REST, and a retry on the other surface gets the reply in its own shape.
 * Records from before are an MCP surface's (null).
 */
export class IdempotencySurface1764718000000 implements MigrationInterface {
  name = 'IdempotencySurface1764718000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE idempotency_records ADD COLUMN surface text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE idempotency_records DROP COLUMN surface`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Room on each page of `idempotency_records` for the completion's new row
 * version: a record is inserted by its claim and updated once by its
 * completion, and at the default fillfactor (100) the page is full by then,
 * so the update lands on another page and adds an entry to both indexes.
 * Half-full pages keep it on the same page as a heap-only tuple, with no index
 * entry (idempotency/README.md). Applies to pages written from now on.
 */
export class IdempotencyFillfactor1764724000000 implements MigrationInterface {
  name = 'IdempotencyFillfactor1764724000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE idempotency_records SET (fillfactor = 50)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE idempotency_records RESET (fillfactor)`);
  }
}

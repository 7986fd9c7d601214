import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The W3C trace id a chat_message's post carried (its `traceparent`, when
 * tracing is on), so that the operator's views of a call (the admin API, `admin
 * call show`) name its trace. Null when the post carried none. A nullable
 * column without a default: no rewrite of the table.
 */
export class MessageTraceId1765000000000 implements MigrationInterface {
  name = 'MessageTraceId1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages ADD COLUMN trace_id text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages DROP COLUMN trace_id`);
  }
}

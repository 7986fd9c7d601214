import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Direct sends (webhooks/README.md, "The replica that wrote it sends it"): an
 * outcome row may be written already leased to the replica that wrote it, which
 * sends it at once, without the fan-out and claim round trips, and settles it in
 * one statement. `lease_token` is that replica's, `lease_until` when the row is
 * any replica's again (one that died before settling it): the fan-out takes only
 * rows with no lease or an ended one.
 */
export class WebhookEventsLease1764715000000 implements MigrationInterface {
  name = 'WebhookEventsLease1764715000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_events ADD COLUMN lease_token uuid, ADD COLUMN lease_until timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_events DROP COLUMN lease_token, DROP COLUMN lease_until`);
  }
}

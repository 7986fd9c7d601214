import { Injectable } from '@nestjs/common';
import { InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import { notifyChange } from '../database/notify-change';
import type { GatewayDb } from '../database/schema';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const now = sql<Date>`now()`;

/** Revoked grant ids, kept until the grants would have expired anyway. */
@Injectable()
export class GrantRevocationsStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  /** Revoke a grant on every gateway at once (NOTIFY in the same transaction). */
  async revoke(grantId: string, keepForSeconds: number): Promise<{ grant_id: string; revoked_at: string }> {
    if (!UUID.test(grantId)) throw new Error(`${grantId} is not a grant id (a UUID)`);
    return this.db.transaction().execute(async (tx) => {
      // A second revocation keeps the first one's times; the no-op update makes RETURNING answer.
      const row = await tx
        .insertInto('grant_revocations')
        .values({
          grant_id: grantId.toLowerCase(),
          expires_at: sql<Date>`now() + make_interval(secs => ${keepForSeconds})`,
        })
        .onConflict((oc) => oc.column('grant_id').doUpdateSet((eb) => ({ grant_id: eb.ref('excluded.grant_id') })))
        .returning(['grant_id', 'revoked_at'])
        .executeTakeFirstOrThrow();
      await notifyChange('grant', row.grant_id).execute(tx);
      return { grant_id: row.grant_id, revoked_at: row.revoked_at.toISOString() };
    });
  }

  async active(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('grant_revocations')
      .select('grant_id')
      .where('expires_at', '>', now)
      .execute();
    return rows.map((row) => row.grant_id);
  }

  async purgeExpired(): Promise<number> {
    const { numDeletedRows } = await this.db
      .deleteFrom('grant_revocations')
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return Number(numDeletedRows);
  }
}

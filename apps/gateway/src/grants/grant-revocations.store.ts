import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { notifySql } from '../cache/cache-invalidation.service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Revoked grant ids, kept until the grants would have expired anyway. */
@Injectable()
export class GrantRevocationsStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Revoke a grant on every gateway at once (NOTIFY in the same transaction). */
  async revoke(grantId: string, keepForSeconds: number): Promise<{ grant_id: string; revoked_at: string }> {
    if (!UUID.test(grantId)) throw new Error(`${grantId} is not a grant id (a UUID)`);
    return this.db.transaction(async (tx) => {
      const [row] = await tx.query(
        `INSERT INTO grant_revocations (grant_id, expires_at) VALUES ($1, now() + make_interval(secs => $2))
         ON CONFLICT (grant_id) DO UPDATE SET grant_id = EXCLUDED.grant_id
         RETURNING grant_id, revoked_at`,
        [grantId.toLowerCase(), keepForSeconds],
      );
      await tx.query(notifySql('grant'), [row.grant_id]);
      return { grant_id: row.grant_id, revoked_at: new Date(row.revoked_at).toISOString() };
    });
  }

  async active(): Promise<string[]> {
    const rows: { grant_id: string }[] = await this.db.query(
      `SELECT grant_id FROM grant_revocations WHERE expires_at > now()`,
    );
    return rows.map((row) => row.grant_id);
  }

  async purgeExpired(): Promise<number> {
    const [, affected]: [unknown, number] = await this.db.query(`DELETE FROM grant_revocations WHERE expires_at <= now()`);
    return affected;
  }
}

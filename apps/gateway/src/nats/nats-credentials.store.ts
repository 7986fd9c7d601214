import { Injectable } from '@nestjs/common';
import { InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import type { GatewayDb } from '../database/schema';

export interface NatsCredentialView {
  user: string;
  agent_id: string;
  issued_at: string;
  revoked_at: string | null;
  /** When the servers stop taking the user (its JWT's `exp`); null: never. */
  expires_at: string | null;
}

/** A user issued elsewhere (nats-init) to record: public key and agent only, never a secret. */
export interface IssuedAgentUser {
  user: string;
  agent_id: string;
  /** Seconds since the epoch, from the user JWT. */
  issued_at: number;
  expires_at?: number;
}

/** The NATS users issued to agents (public keys only), for listing and revoking by agent. */
@Injectable()
export class NatsCredentialsStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  async record(user: string, agentId: string, expiresAt?: number): Promise<void> {
    await this.db
      .insertInto('nats_credentials')
      .values({ user_key: user, agent_id: agentId, expires_at: expiresAt ? new Date(expiresAt * 1000) : null })
      .execute();
  }

  /**
   * Record users issued without the database (nats-init runs before the migrations); a
   * user already recorded is left as it is (a revoked one stays revoked). The users newly recorded.
   */
  async recordIssued(users: IssuedAgentUser[]): Promise<string[]> {
    if (users.length === 0) return [];
    const rows = await this.db
      .insertInto('nats_credentials')
      .values(
        users.map((u) => ({
          user_key: u.user,
          agent_id: u.agent_id,
          issued_at: new Date(u.issued_at * 1000),
          expires_at: u.expires_at ? new Date(u.expires_at * 1000) : null,
        })),
      )
      .onConflict((conflict) => conflict.column('user_key').doNothing())
      .returning('user_key')
      .execute();
    return rows.map((row) => row.user_key);
  }

  async list(agentId?: string): Promise<NatsCredentialView[]> {
    let query = this.db.selectFrom('nats_credentials').selectAll().orderBy('issued_at');
    if (agentId) query = query.where('agent_id', '=', agentId);
    return (await query.execute()).map((row) => ({
      user: row.user_key,
      agent_id: row.agent_id,
      issued_at: row.issued_at.toISOString(),
      revoked_at: row.revoked_at?.toISOString() ?? null,
      expires_at: row.expires_at?.toISOString() ?? null,
    }));
  }

  /** The agent's users not revoked yet. */
  async active(agentId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('nats_credentials')
      .select('user_key')
      .where('agent_id', '=', agentId)
      .where('revoked_at', 'is', null)
      .execute();
    return rows.map((row) => row.user_key);
  }

  /** Mark users revoked (after the servers took the revocation). */
  async markRevoked(users: string[]): Promise<void> {
    if (users.length === 0) return;
    await this.db
      .updateTable('nats_credentials')
      .set({ revoked_at: sql<Date>`now()` })
      .where('user_key', 'in', users)
      .where('revoked_at', 'is', null)
      .execute();
  }
}

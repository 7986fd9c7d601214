import { Injectable } from '@nestjs/common';
import { InjectKysely } from '@mcpgw/persistence';
import { sql } from 'kysely';
import type { GatewayDb } from '../database/schema';
import type { ChainHead } from './audit-chain';
import type { AuditEntry, AuditKind, ChainedEntry } from './audit-record';

/** What `audit list` and `GET /admin/v1/audit` filter on (all optional); newest first. */
export interface AuditFilter {
  kind?: AuditKind;
  principal?: string;
  agentId?: string;
  tool?: string;
  outcome?: string;
  since?: Date;
  until?: Date;
  /** Keyset paging: rows strictly older than this (`next` of the page before). */
  before?: { at: Date; chain: string; seq: number };
  limit: number;
}

export interface Anchor extends ChainHead {
  at: string;
  dropped?: boolean;
}

/**
 * The trail's rows (schema `audit`): appended in batches, read back for the
 * operator, chain by chain for `audit verify`. Nothing here updates or
 * deletes a row; retention is the database function `audit.drop_chains_before`,
 * which drops whole chains and keeps their anchors.
 */
@Injectable()
export class AuditStore {
  constructor(@InjectKysely() private readonly db: GatewayDb) {}

  /** One statement for the batch, whatever its size. */
  async insert(rows: ChainedEntry[]): Promise<void> {
    if (!rows.length) return;
    await sql`
      INSERT INTO audit.records (chain, seq, kind, at, surface, principal, agent_id, tool, call_id, outcome,
        error_code, duration_ms, pod_id, replayed, arguments_digest, arguments, detail, prev_hash, hash)
      SELECT chain, seq, kind, at, surface, principal, agent_id, tool, call_id, outcome,
        error_code, duration_ms, pod_id, replayed, arguments_digest, arguments, detail, prev_hash, hash
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(chain text, seq integer, kind text,
        at timestamptz, surface text, principal text, agent_id text, tool text, call_id text, outcome text,
        error_code text, duration_ms integer, pod_id text, replayed boolean, arguments_digest text,
        arguments jsonb, detail jsonb, prev_hash text, hash text)`.execute(this.db);
  }

  async anchor(anchor: Anchor): Promise<void> {
    await this.db
      .insertInto('audit.anchors')
      .values({ chain: anchor.chain, seq: anchor.seq, hash: anchor.hash, at: new Date(anchor.at) })
      .onConflict((oc) => oc.columns(['chain', 'seq']).doNothing())
      .execute();
  }

  async list(filter: AuditFilter): Promise<ChainedEntry[]> {
    const rows = await this.db
      .selectFrom('audit.records')
      .selectAll()
      .$if(filter.kind !== undefined, (qb) => qb.where('kind', '=', filter.kind!))
      .$if(filter.principal !== undefined, (qb) => qb.where('principal', '=', filter.principal!))
      .$if(filter.agentId !== undefined, (qb) => qb.where('agent_id', '=', filter.agentId!))
      .$if(filter.tool !== undefined, (qb) => qb.where('tool', '=', filter.tool!))
      .$if(filter.outcome !== undefined, (qb) => qb.where('outcome', '=', filter.outcome!))
      .$if(filter.since !== undefined, (qb) => qb.where('at', '>=', filter.since!))
      .$if(filter.until !== undefined, (qb) => qb.where('at', '<', filter.until!))
      .$if(filter.before !== undefined, (qb) =>
        qb.where(
          sql<boolean>`(at, chain, seq) < (${filter.before!.at}, ${filter.before!.chain}, ${filter.before!.seq})`,
        ),
      )
      .orderBy('at', 'desc')
      .orderBy('chain', 'desc')
      .orderBy('seq', 'desc')
      .limit(filter.limit)
      .execute();
    return rows.map(entryOf);
  }

  /** The chains whose day is `since` or later (all without), oldest first. */
  async chains(since?: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('audit.records')
      .select('chain')
      .distinct()
      .$if(since !== undefined, (qb) => qb.where(sql<boolean>`left(chain, 10) >= ${since}`))
      .orderBy('chain')
      .execute();
    return rows.map((row) => row.chain);
  }

  /** One chain's rows in order, `limit` from after `afterSeq`. */
  async chainRows(chain: string, afterSeq: number, limit: number): Promise<ChainedEntry[]> {
    const rows = await this.db
      .selectFrom('audit.records')
      .selectAll()
      .where('chain', '=', chain)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.map(entryOf);
  }

  async anchors(since?: string): Promise<Anchor[]> {
    const rows = await this.db
      .selectFrom('audit.anchors')
      .selectAll()
      .$if(since !== undefined, (qb) => qb.where(sql<boolean>`left(chain, 10) >= ${since}`))
      .orderBy('chain')
      .orderBy('seq')
      .execute();
    return rows.map((row) => ({ ...row, at: row.at.toISOString() }));
  }

  /** Drop the chains of days before `cutoff` (YYYY-MM-DD), keeping their anchors: rows dropped. */
  async dropChainsBefore(cutoff: string): Promise<number> {
    const { rows } = await sql<{
      dropped: number;
    }>`SELECT audit.drop_chains_before(${cutoff}::date) AS dropped`.execute(this.db);
    return rows[0].dropped;
  }
}

type Row = Omit<ChainedEntry, 'at'> & { at: Date };

function entryOf(row: Row): ChainedEntry {
  const entry: AuditEntry = { ...row, at: row.at.toISOString() };
  return entry as ChainedEntry;
}

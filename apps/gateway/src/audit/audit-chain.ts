import { randomBytes } from 'node:crypto';
import { GENESIS_HASH, chainHash, type AuditEntry, type ChainedEntry } from './audit-record';

/** The last row of a chain: what the next row links to, and what an anchor names. */
export interface ChainHead {
  chain: string;
  seq: number;
  hash: string;
}

/**
 * One writer's chains: a chain per UTC day (`<day>/<writer>`), where the writer
 * is this process (its instance name and a random boot id), so no two
 * processes ever append to one chain and none waits for another. Links each
 * entry to the one before it; the caller writes them in this order.
 */
export class AuditChain {
  readonly writer: string;
  private head?: ChainHead;

  constructor(instance: string) {
    this.writer = `${instance.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64)}-${randomBytes(4).toString('hex')}`;
  }

  /**
   * The entries, linked into the chain of the day they are linked on (UTC; not
   * their own `at`, which may be a minute earlier): a new day starts a new
   * chain, and the old one's head is returned as ended.
   */
  link(entries: AuditEntry[], now = new Date()): { rows: ChainedEntry[]; ended: ChainHead[] } {
    const rows: ChainedEntry[] = [];
    const ended: ChainHead[] = [];
    const chain = `${now.toISOString().slice(0, 10)}/${this.writer}`;
    for (const entry of entries) {
      if (this.head && this.head.chain !== chain) {
        ended.push(this.head);
        this.head = undefined;
      }
      const prev = this.head ?? { chain, seq: 0, hash: GENESIS_HASH };
      const row = { ...entry, chain, seq: prev.seq + 1, prev_hash: prev.hash };
      const linked: ChainedEntry = { ...row, hash: chainHash(prev.hash, row) };
      rows.push(linked);
      this.head = { chain, seq: linked.seq, hash: linked.hash };
    }
    return { rows, ended };
  }

  get current(): ChainHead | undefined {
    return this.head;
  }
}

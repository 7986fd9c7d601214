import { GENESIS_HASH, chainHash, type ChainedEntry } from './audit-record';
import type { Anchor, AuditStore } from './audit.store';

const PAGE = 2_000;

/** Where a chain stops being what was written. */
export interface ChainBreak {
  chain: string;
  seq: number;
  reason: string;
}

export interface Verification {
  ok: boolean;
  chains: number;
  rows: number;
  /** The first break of each broken chain. */
  broken: ChainBreak[];
  anchors: number;
}

/**
 * Recompute every chain (of days from `since` on): each row's previous hash
 * must be the hash of the row before, its hash must be SHA-256(previous hash ‖
 * canonical row), and its `seq` the next one (a deleted row leaves a gap).
 * Then every anchor, stored or given (the log's or the export's copies), must
 * name a row that is there with that hash: a chain cut short after its anchor,
 * or rewritten whole with hashes made anew, fails there. Of a chain retention
 * dropped, only the head it kept can be checked: an anchor before it passes, one
 * past it (the chain was cut short before the drop) does not.
 */
export async function verifyTrail(store: AuditStore, since?: string, given: Anchor[] = []): Promise<Verification> {
  const broken: ChainBreak[] = [];
  const heads = new Map<string, Map<number, string>>();
  let rows = 0;
  const chains = await store.chains(since);
  for (const chain of chains) {
    const hashes = new Map<number, string>();
    heads.set(chain, hashes);
    let prev = GENESIS_HASH;
    let expected = 1;
    let page: ChainedEntry[];
    let stop = false;
    do {
      page = await store.chainRows(chain, expected - 1, PAGE);
      for (const row of page) {
        rows++;
        const reason =
          row.seq !== expected
            ? `row ${expected} is missing (the next is ${row.seq})`
            : row.prev_hash !== prev
              ? 'its previous hash is not the hash of the row before it'
              : chainHash(prev, row) !== row.hash
                ? 'its content does not match its hash (changed after it was written)'
                : undefined;
        if (reason) {
          broken.push({ chain, seq: row.seq === expected ? row.seq : expected, reason });
          stop = true;
          break;
        }
        hashes.set(row.seq, row.hash);
        prev = row.hash;
        expected++;
      }
    } while (!stop && page.length === PAGE);
  }
  const anchors = [...(await store.anchors(since)), ...given].filter((a) => !since || a.chain.slice(0, 10) >= since);
  // Chains retention dropped whole: their head, kept as an anchor marked dropped, is what is left of each.
  const droppedHeads = new Map(anchors.filter((a) => a.dropped).map((a) => [a.chain, a]));
  for (const anchor of anchors) {
    if (anchor.dropped) continue;
    const dropped = heads.has(anchor.chain) ? undefined : droppedHeads.get(anchor.chain);
    if (dropped) {
      // An earlier anchor of a dropped chain (the hourly ones, a log's copies) names rows that went by retention.
      if (anchor.seq < dropped.seq || (anchor.seq === dropped.seq && anchor.hash === dropped.hash)) continue;
      broken.push({
        chain: anchor.chain,
        seq: anchor.seq,
        reason:
          anchor.seq === dropped.seq
            ? 'an anchor names this row with another hash than retention kept'
            : 'an anchor names this row, which was not there when retention dropped the chain',
      });
      continue;
    }
    if (broken.some((b) => b.chain === anchor.chain && b.seq <= anchor.seq)) continue;
    const hash = heads.get(anchor.chain)?.get(anchor.seq);
    if (hash === anchor.hash) continue;
    broken.push({
      chain: anchor.chain,
      seq: anchor.seq,
      reason:
        hash === undefined
          ? 'an anchor names this row, which is not there'
          : 'an anchor names this row with another hash',
    });
  }
  return { ok: broken.length === 0, chains: chains.length, rows, broken, anchors: anchors.length };
}

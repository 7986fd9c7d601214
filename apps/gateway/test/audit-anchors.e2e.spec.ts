import { startTestStack, type TestStack } from '@mcpgw/devstack';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENESIS_HASH, chainHash, type ChainedEntry } from '../src/audit/audit-record';
import { startOtlpReceiver, type OtlpReceiver } from './support/otlp-receiver';

type Head = { chain: string; seq: number; hash: string };

/**
 * The audit trail's anchors and retention (apps/gateway/src/audit/README.md,
 * "Anchors", "Retention") on a running stack: each chain's head goes to the
 * log, the OTLP export and `audit.anchors`; a chain rewritten whole with fresh
 * hashes, or cut short at its end, passes the chain checks and fails at an
 * anchor; retention drops whole chains of past days, keeps their heads, and
 * `audit verify` still passes after it.
 */
describe('audit anchors and retention', () => {
  let env: TestStack;
  let otlp: OtlpReceiver;
  let db: Client;
  /** The gateway's chain of today, and its rows as written (restored after each tampering). */
  let chain: string;
  let written: ChainedEntry[];
  let writtenAnchors: { chain: string; seq: number; hash: string; at: Date }[];
  const verify = (...flags: string[]) => env.stack.adminRun('audit', 'verify', ...flags);
  const gateway = () => env.stack.processes.find((p) => p.name === 'gateway-1')!;
  const rowsOf = async (name: string): Promise<ChainedEntry[]> =>
    (await db.query(`SELECT * FROM audit.records WHERE chain = $1 ORDER BY seq`, [name])).rows.map((row) => ({
      ...row,
      at: (row.at as Date).toISOString(),
    }));
  const insertRows = (rows: ChainedEntry[]) =>
    db.query(`INSERT INTO audit.records SELECT * FROM jsonb_populate_recordset(NULL::audit.records, $1::jsonb)`, [
      JSON.stringify(rows),
    ]);
  const restore = async () => {
    await db.query(`DELETE FROM audit.records WHERE chain = $1`, [chain]);
    await insertRows(written);
    await db.query(`DELETE FROM audit.anchors WHERE chain = $1`, [chain]);
    for (const a of writtenAnchors)
      await db.query(`INSERT INTO audit.anchors (chain, seq, hash, at) VALUES ($1, $2, $3, $4)`, [
        a.chain,
        a.seq,
        a.hash,
        a.at,
      ]);
  };
  /** The log's `audit anchor` lines, as a file for `verify --anchors`. */
  const logFile = (lines: object[]) => {
    const file = join(tmpdir(), `audit-anchors-${process.pid}-${Date.now()}.log`);
    writeFileSync(file, lines.map((line) => JSON.stringify(line)).join('\n'));
    return file;
  };
  const anchorLines = () => gateway().logs.filter((line) => line.msg === 'audit anchor');

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    env = await startTestStack({
      env: { AUDIT_FLUSH_INTERVAL_MS: '50' },
      // An anchor a second (the least allowed) instead of an hour.
      gatewayEnv: { AUDIT_ANCHOR_INTERVAL_MS: '1000', OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: `${otlp.url}/v1/logs` },
    });
    db = new Client({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
  }, 180_000);

  afterAll(async () => {
    await db?.end();
    await env?.stop();
    otlp?.server.close();
  });

  it("anchors each chain's head: in the log, in the OTLP export, and in audit.anchors", async () => {
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${env.gatewayUrls[0]}/api/v1/agents/${env.agentId}/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-agent-api-key': env.apiKey },
        body: JSON.stringify({ tool: 'echo', arguments: { text: `anchored ${i}` } }),
      });
      expect(response.status).toBe(200);
    }
    await expect
      .poll(async () => (await db.query(`SELECT chain FROM audit.records WHERE tool = 'echo'`)).rows.length)
      .toBe(3);
    chain = (await db.query(`SELECT chain FROM audit.records WHERE tool = 'echo' LIMIT 1`)).rows[0].chain;
    expect(chain).toMatch(/^\d{4}-\d{2}-\d{2}\/gateway-1-[0-9a-f]{8}$/);

    // Once the head stops moving, the next anchor names it: the last row's seq and hash.
    await expect
      .poll(
        async () => {
          const last = (await rowsOf(chain)).at(-1)!;
          return anchorLines().some((line) => line.chain === chain && line.seq === last.seq && line.hash === last.hash);
        },
        { timeout: 15_000, interval: 200 },
      )
      .toBe(true);
    written = await rowsOf(chain);
    const head: Head = { chain, seq: written.at(-1)!.seq, hash: written.at(-1)!.hash };
    await expect
      .poll(() =>
        otlp.logs
          .filter((log) => log.eventName === 'mcpgw.audit.anchor')
          .map((log) => ({
            chain: log.attributes['mcpgw.audit.chain'],
            seq: Number(log.attributes['mcpgw.audit.seq']),
            hash: log.attributes['mcpgw.audit.hash'],
          })),
      )
      .toContainEqual(head);
    const stored = await db.query(`SELECT chain, seq, hash, dropped FROM audit.anchors WHERE chain = $1`, [chain]);
    expect(stored.rows).toContainEqual({ ...head, dropped: false });
    writtenAnchors = (await db.query(`SELECT chain, seq, hash, at FROM audit.anchors WHERE chain = $1`, [chain])).rows;
    expect((await verify()).code).toBe(0);
  }, 60_000);

  it('a chain rewritten whole with hashes made anew fails at its anchor: the stored one, or the log copy', async () => {
    // The rewrite a database owner could make: one row changed, every hash from there recomputed.
    let prev = GENESIS_HASH;
    for (const row of written) {
      const rewritten = { ...row, tool: row.seq === written[0].seq ? 'rewritten' : row.tool, prev_hash: prev };
      const hash = chainHash(prev, rewritten);
      await db.query(`UPDATE audit.records SET tool = $3, prev_hash = $4, hash = $5 WHERE chain = $1 AND seq = $2`, [
        chain,
        row.seq,
        rewritten.tool,
        prev,
        hash,
      ]);
      prev = hash;
    }
    const anchored = (await db.query(`SELECT seq FROM audit.anchors WHERE chain = $1 ORDER BY seq`, [chain])).rows;
    const rewritten = await verify();
    expect(rewritten.code, rewritten.stdout).toBe(3);
    expect(rewritten.stdout).toContain(
      `chain ${chain} row ${anchored[0].seq}: an anchor names this row with another hash`,
    );

    // The owner deletes the stored anchors too: the database alone now verifies; the log's copies do not.
    await db.query(`DELETE FROM audit.anchors WHERE chain = $1`, [chain]);
    expect((await verify()).code).toBe(0);
    const withLog = await verify('--anchors', logFile(anchorLines()));
    expect(withLog.code, withLog.stdout).toBe(3);
    expect(withLog.stdout).toContain(
      `chain ${chain} row ${anchored[0].seq}: an anchor names this row with another hash`,
    );

    await restore();
    expect((await verify('--anchors', logFile(anchorLines()))).code).toBe(0);
  }, 60_000);

  it('a chain cut short at its end (its last rows deleted) fails at the anchor that named its head', async () => {
    const head = written.at(-1)!;
    await db.query(`DELETE FROM audit.records WHERE chain = $1 AND seq > $2`, [chain, head.seq - 2]);
    const cut = await verify();
    expect(cut.code, cut.stdout).toBe(3);
    expect(cut.stdout).toContain(`chain ${chain} row ${head.seq}: an anchor names this row, which is not there`);
    await restore();
    expect((await verify()).code).toBe(0);
  }, 60_000);

  it('retention drops whole chains of past days, keeps their heads as anchors, and verify still passes', async () => {
    const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
    /** A chain as a writer of that day left it: its rows, an hourly anchor mid-chain and the day's last. */
    const pastChain = async (daysAgo: number, rows: number) => {
      const name = `${day(daysAgo)}/gateway-old-0000000${daysAgo % 10}`;
      const entries: ChainedEntry[] = [];
      let prev = GENESIS_HASH;
      for (let seq = 1; seq <= rows; seq++) {
        const entry = {
          ...written[0],
          chain: name,
          seq,
          at: `${day(daysAgo)}T12:00:0${seq}.000Z`,
          call_id: `call_past_${daysAgo}_${seq}`,
          prev_hash: prev,
        };
        entries.push({ ...entry, hash: (prev = chainHash(prev, entry)) });
      }
      await insertRows(entries);
      const anchors = [entries[1], entries.at(-1)!].map(({ seq, hash }) => ({ chain: name, seq, hash }));
      for (const a of anchors) {
        await db.query(`INSERT INTO audit.anchors (chain, seq, hash, at) VALUES ($1, $2, $3, now())`, [
          a.chain,
          a.seq,
          a.hash,
        ]);
      }
      return anchors;
    };
    const old = await pastChain(40, 4);
    const recent = await pastChain(5, 3);
    expect((await verify()).code).toBe(0);

    // A replica with 30 days of retention drops the 40-day-old chain when it starts.
    const started = await env.stack.startGateway({ AUDIT_RETENTION_DAYS: '30' });
    try {
      const dropped = await started.process.waitForLog((line) => line.msg === 'audit chains past retention dropped');
      expect(dropped).toMatchObject({ before: day(30), rows: 4 });
    } finally {
      await started.process.stop();
    }
    const count = async (name: string) =>
      Number((await db.query(`SELECT count(*) FROM audit.records WHERE chain = $1`, [name])).rows[0].count);
    expect(await count(old[0].chain)).toBe(0);
    expect(await count(recent[0].chain)).toBe(3);
    const kept = await db.query(`SELECT seq, hash, dropped FROM audit.anchors WHERE chain = $1 ORDER BY seq`, [
      old[0].chain,
    ]);
    expect(kept.rows.at(-1)).toEqual({ seq: 4, hash: old[1].hash, dropped: true });

    // What is left verifies: the stored anchors, and the log's copies of the dropped chain's anchors.
    const after = await verify();
    expect(after.code, after.stdout).toBe(0);
    const logged = [...old, ...recent].map((a) => ({ msg: 'audit anchor', ...a }));
    const withLog = await verify('--anchors', logFile(logged));
    expect(withLog.code, withLog.stdout).toBe(0);
    // A log anchor past the head retention kept: the chain had been cut short before it was dropped.
    const past = { msg: 'audit anchor', chain: old[0].chain, seq: 5, hash: 'f'.repeat(64) };
    const cut = await verify('--anchors', logFile([...logged, past]));
    expect(cut.code, cut.stdout).toBe(3);
    expect(cut.stdout).toContain(`chain ${old[0].chain} row 5:`);
  }, 120_000);
});

import { describe, expect, it } from 'vitest';
import type { GatewayEnv } from '../config/gateway.env';
import type { AuditExport } from './audit-export';
import { auditEntry, type ChainedEntry } from './audit-record';
import type { AuditStore } from './audit.store';
import { AuditWriter } from './audit-writer.service';

/**
 * How the writer batches (the rows themselves go to PostgreSQL in audit.e2e).
 * A store that holds each statement open until released, to see what arrives
 * while one is under way.
 */
function writerWithSlowStore() {
  const statements: ChainedEntry[][] = [];
  const pending: Array<() => void> = [];
  const store = {
    insert: (rows: ChainedEntry[]) =>
      new Promise<void>((resolve) => {
        statements.push(rows);
        pending.push(resolve);
      }),
    anchor: async () => undefined,
  } as unknown as AuditStore;
  const exporter = { rows: () => undefined, shutdown: async () => undefined } as unknown as AuditExport;
  const env = { AUDIT: 'on', SERVICE_INSTANCE: 'gateway-1' } as GatewayEnv;
  const writer = new AuditWriter(store, exporter, env);
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  /** Let the writer reach its statement, end the statements under way, let it go on. */
  const release = async () => {
    await settle();
    while (pending.length) pending.shift()!();
    await settle();
  };
  return { writer, statements, release, settle };
}

const entry = () => auditEntry('tool_call', { tool: 'echo' });

describe('the audit writer', () => {
  it('writes what waits in one statement; rows that arrive meanwhile wait for the next turn', async () => {
    const { writer, statements, release, settle } = writerWithSlowStore();
    for (let i = 0; i < 3; i++) writer.append(entry());
    const first = writer.flush();
    await settle(); // the statement is under way
    for (let i = 0; i < 5; i++) writer.append(entry());
    await release();
    await first;
    // Not a second statement straight after the first: a busy gateway writes once per interval.
    expect(statements.map((rows) => rows.length)).toEqual([3]);
    const second = writer.flush();
    await release();
    await second;
    expect(statements.map((rows) => rows.length)).toEqual([3, 5]);
  });

  it('a flush asked for during a write writes what was appended before it (the drain relies on it)', async () => {
    const { writer, statements, release, settle } = writerWithSlowStore();
    writer.append(entry());
    const under = writer.flush();
    await settle(); // the statement is under way
    writer.append(entry());
    const asked = writer.flush();
    await release();
    await under;
    await release();
    await asked;
    expect(statements.map((rows) => rows.length)).toEqual([1, 1]);
    expect(statements[1][0].seq).toBe(2);
  });

  it('writes a backlog in batches of 1,000, one after the other', async () => {
    const { writer, statements, release } = writerWithSlowStore();
    for (let i = 0; i < 2_500; i++) writer.append(entry());
    const done = writer.flush();
    for (let i = 0; i < 3; i++) await release();
    await done;
    expect(statements.map((rows) => rows.length)).toEqual([1_000, 1_000, 500]);
  });
});

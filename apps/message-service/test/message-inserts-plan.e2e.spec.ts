import { isolatedEnvironment, type Isolation } from '@mcpgw/devstack';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertBatchStatement, type NewRow } from '../src/messages/insert-batch.store';

/**
 * The message inserts run at the rate of the calls as prepared statements
 * (messages.store.ts). PostgreSQL may keep a generic plan of one, made once,
 * perhaps while the tables were empty: such a plan must still look each row up
 * by its unique key, not join a sequential scan of `messages` (which is what
 * the inserts' former `EXISTS` lookups became, and what made them dearer as
 * the table grew: libs/persistence/README.md). On a freshly migrated, empty
 * database, every text the inserts use is planned generic and explained.
 */
describe('the message inserts, planned generic on empty tables', () => {
  let isolation: Isolation;
  let client: Client;
  const compiler = new Kysely<unknown>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });

  beforeAll(async () => {
    isolation = await isolatedEnvironment('insert-plan', { migrated: true });
    client = new Client({ connectionString: isolation.databaseUrl });
    await client.connect();
    await client.query('SET search_path = messaging');
    await client.query('SET plan_cache_mode = force_generic_plan');
  });

  afterAll(async () => {
    await client?.end();
    await isolation?.remove();
  });

  const row = (newChannel: boolean): NewRow => ({
    id: randomUUID(),
    channelId: randomUUID(),
    newChannel,
    agentId: 'plan-agent',
    type: newChannel ? 'chat_message' : 'agent_reply',
    inReplyTo: newChannel ? null : randomUUID(),
    json: '{}',
    sender: null,
    traceId: null,
    fingerprint: null,
    keyRef: newChannel ? randomUUID() : null,
  });

  it.each([
    ['new channels', [row(true)]],
    ['existing channels', [row(false)]],
    ['both', [row(true), row(false)]],
  ])('%s: every lookup an index probe', async (name, rows) => {
    const text = insertBatchStatement(rows).compile(compiler).sql;
    const statement = `insert_${name.replace(/\W/g, '_')}`;
    await client.query(
      `PREPARE ${statement}(uuid[], uuid[], text[], text[], uuid[], text[], text[], text[], uuid[], boolean[], json) AS ${text}`,
    );
    const { rows: lines } = await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN EXECUTE ${statement}(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
    );
    const plan = lines.map((line) => line['QUERY PLAN']).join('\n');
    expect(plan).toMatch(/Index (Only )?Scan using messages_id_key/);
    // A keyed posting's key is looked up by its unique index too (a new channel waits for no holder).
    if (rows.some((row) => row.keyRef)) expect(plan).toMatch(/Index (Only )?Scan using messages_key_ref/);
    expect(plan).not.toMatch(/Seq Scan on (messages|channels)/);
  });
});

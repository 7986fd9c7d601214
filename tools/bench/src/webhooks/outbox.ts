import { Client } from 'pg';

/** The webhook outbox of one stack's database: rows by status, and attempts made so far. */
export interface OutboxState {
  pending: number;
  delivered: number;
  failed: number;
  attempts: number;
}

/** Read once, after a window (its connection and query are charged to no window). */
export async function readOutbox(databaseUrl: string): Promise<OutboxState> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ status: string; n: string; attempts: string | null }>(
      'SELECT status, count(*) AS n, sum(attempts) AS attempts FROM gateway.webhook_deliveries GROUP BY status',
    );
    const state: OutboxState = { pending: 0, delivered: 0, failed: 0, attempts: 0 };
    for (const row of rows) {
      if (row.status === 'pending' || row.status === 'delivered' || row.status === 'failed')
        state[row.status] = Number(row.n);
      state.attempts += Number(row.attempts ?? 0);
    }
    return state;
  } finally {
    await client.end().catch(() => undefined);
  }
}

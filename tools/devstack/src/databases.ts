import { Client } from 'pg';

/** The same server (or servers, in a multi-host URL, which `new URL` cannot read), another database. */
export function withDatabase(url: string, database: string): string {
  const multiHost = /^([a-z]+:\/\/[^/?#]*,[^/?#]*)(?:\/[^?#]*)?(.*)$/i.exec(url);
  if (multiHost) return `${multiHost[1]}/${database}${multiHost[2]}`;
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function databaseExists(adminUrl: string, name: string): Promise<boolean> {
  return withClient(adminUrl, async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    return (rowCount ?? 0) > 0;
  });
}

export async function createDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/** Whether a PostgreSQL server answers at this URL. */
export async function postgresAnswers(url: string): Promise<boolean> {
  try {
    await withClient(url, (client) => client.query('SELECT 1'));
    return true;
  } catch {
    return false;
  }
}

/** One admin connection for `work`, closed after. */
export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

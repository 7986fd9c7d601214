import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { withClient, withDatabase } from './databases';
import { runNode } from './one-shot';
import { appEntry, type AppName } from './stack';

/** The advisory lock that lets one builder at a time make the template (any worker, any run). */
const TEMPLATE_LOCK = 0x6d637067; // "mcpg"
const TEMPLATE_PREFIX = 'mcpgw_template_';
const MIGRATING_APPS: readonly AppName[] = ['message-service', 'gateway'];

/**
 * A new database, migrated: a copy of a template database that the apps'
 * migrations were run on once (`CREATE DATABASE … TEMPLATE`, a file copy of
 * about 0.3 s, where running both apps' migrations takes two Node processes and
 * 2-5 s). The template is named by a digest of the built migrations, so a
 * changed or added migration makes a new one (and the old ones are dropped).
 * The migrations themselves still run, by `migrate.js`, as users run them: once
 * per change, on the template.
 */
export async function createMigratedDatabase(adminUrl: string, name: string): Promise<void> {
  const template = await migratedTemplate(adminUrl);
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
}

async function migratedTemplate(adminUrl: string): Promise<string> {
  const template = `${TEMPLATE_PREFIX}${migrationsDigest()}`;
  return withClient(adminUrl, async (client) => {
    await client.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    try {
      const ready = await client.query('SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate', [template]);
      if (ready.rowCount) return template;
      // Built under another name and renamed once whole: a builder killed half-way leaves no template behind.
      const building = `${template}_building`;
      await client.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
      await client.query(`CREATE DATABASE "${building}"`);
      for (const app of MIGRATING_APPS) {
        await runNode(appEntry(app, 'migrate.js'), [], { DATABASE_URL: withDatabase(adminUrl, building) });
      }
      await client.query(`ALTER DATABASE "${building}" RENAME TO "${template}"`);
      await client.query(`ALTER DATABASE "${template}" IS_TEMPLATE true`);
      await dropOtherTemplates(client, template);
      return template;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
    }
  });
}

/** Templates of older migrations: dropped (best effort; one being copied right now stays until next time). */
async function dropOtherTemplates(client: Client, keep: string): Promise<void> {
  const { rows } = await client.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname LIKE $1 AND datname <> $2`,
    [`${TEMPLATE_PREFIX}%`, keep],
  );
  for (const { datname } of rows) {
    await client.query(`ALTER DATABASE "${datname}" IS_TEMPLATE false`).catch(() => undefined);
    await client.query(`DROP DATABASE IF EXISTS "${datname}"`).catch(() => undefined);
  }
}

/** A digest of the built migrations of both apps (what `migrate.js` runs). */
function migrationsDigest(): string {
  const hash = createHash('sha256');
  for (const app of MIGRATING_APPS) {
    const folder = join(dirname(appEntry(app, 'migrate.js')), 'database', 'migrations');
    for (const file of readdirSync(folder)
      .filter((f) => f.endsWith('.js'))
      .sort()) {
      hash.update(`${app}/${file}\n`).update(readFileSync(join(folder, file)));
    }
  }
  return hash.digest('hex').slice(0, 16);
}

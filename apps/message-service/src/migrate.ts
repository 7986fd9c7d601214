import { migrateAndExit } from '@mcpgw/persistence';
import { DatabaseEnv, validateEnv } from '@mcpgw/config';
import { messagingDatabase } from './database/database';

/**
 * One-shot: `node dist/migrate.js` (a Kubernetes Job or init container, compose's
 * `migrate`, the local launcher). It reads only the database settings, so it runs
 * with nothing but DATABASE_URL, whatever else the app itself requires.
 */
migrateAndExit('message-service', () => {
  const env = validateEnv(process.env, DatabaseEnv);
  return { ...messagingDatabase(env.DATABASE_URL), url: env.DATABASE_URL };
});

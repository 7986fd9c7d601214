import { migrateAndExit } from '@mcpgw/persistence';
import { loadEnv } from './config/gateway.env';
import { gatewayDatabase } from './database/database';

/** One-shot: `node dist/migrate.js` (a Kubernetes Job, or the local launcher). */
migrateAndExit('gateway', () => {
  const env = loadEnv();
  return { ...gatewayDatabase(env.DATABASE_URL), url: env.DATABASE_URL };
});

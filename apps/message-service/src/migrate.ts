import { migrateAndExit } from '@mcpgw/persistence';
import { loadEnv } from './config/message-service.env';
import { messagingDatabase } from './database/database';

/** One-shot: `node dist/migrate.js` (a Kubernetes Job, or the local launcher). */
migrateAndExit('message-service', () => {
  const env = loadEnv();
  return { ...messagingDatabase(env.DATABASE_URL), url: env.DATABASE_URL };
});

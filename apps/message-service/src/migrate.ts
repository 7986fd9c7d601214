import { runMigrations } from '@mcpgw/persistence';
import { loadEnv } from './config/message-service.env';
import { messagingDatabase } from './database/database';

/** One-shot: `node dist/migrate.js` (a Kubernetes Job, or the local launcher). */
async function main(): Promise<void> {
  const env = loadEnv();
  const applied = await runMigrations({ ...messagingDatabase(env.DATABASE_URL), url: env.DATABASE_URL });
  process.stdout.write(`${JSON.stringify({ level: 'info', service: 'message-service', msg: 'migrations done', applied })}\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`message-service migrations failed: ${error.message}\n`);
  process.exit(1);
});

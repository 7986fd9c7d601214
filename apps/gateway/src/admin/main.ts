import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { parseArgs } from 'node:util';
import { ServiceError } from '@mcpgw/contracts';
import { EnvValidationError } from '@mcpgw/config';
import { AdminTokensStore } from '../admin-api/admin-tokens.store';
import { AdminLoginCodesStore } from '../admin-api/admin-login-codes.store';
import { PodsStore } from '../agents/pods.store';
import { OperatorRecordsStore } from './operations/records';
import { AgentsStore } from '../agents/agents.store';
import { ApiKeysStore } from '../auth/api-keys.store';
import { AdminModule } from './admin.module';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { GrantKeysService } from '../grants/grant-keys.service';
import { GrantRevocationsStore } from '../grants/grant-revocations.store';
import { PersonalAccessTokensStore } from '../grants/personal-access-tokens.store';
import { AgentQuotasStore } from '../quotas/agent-quotas.store';
import { defaultLimits } from '../quotas/quota-limits';
import { NatsCredentialsStore } from '../nats/nats-credentials.store';
import { WebhookDeliveryLog } from '../webhooks/webhook-delivery-log.store';
import { WebhooksStore } from '../webhooks/webhooks.store';
import { IdempotencyStore } from '../idempotency/idempotency.store';
import { ToolChangesStore } from '../tool-pinning/tool-changes.store';
import { AuditTrail } from '../audit/audit-trail.service';
import { AuditStore } from '../audit/audit.store';
import { auditCommand } from './audited-actions';
import { COMMANDS, type AdminDeps, type Parsed } from './commands';
import { USAGE } from './usage';
import { npmStartDefaults } from './local-stack';

/** `npm run admin -- <command>`: manage agents and keys without SQL. */
async function main(argv: string[]): Promise<number> {
  const parsed = parse(argv);
  if (!parsed) {
    process.stdout.write(`${USAGE}\n`);
    return 2;
  }
  const json = parsed.flags.json === true;
  const command = COMMANDS[parsed.words.slice(0, 2).join(' ')];
  if (!command || parsed.flags.help) {
    process.stdout.write(`${USAGE}\n`);
    return parsed.flags.help ? 0 : 2;
  }
  // Outside production, the settings left unset come from the running `npm start`'s stack, if any.
  const local = npmStartDefaults(process.env);
  if (local) Object.assign(process.env, local.settings);
  const app = await NestFactory.createApplicationContext(AdminModule, { logger: false, abortOnError: false });
  try {
    const env = app.get<GatewayEnv>(GATEWAY_ENV);
    const deps: AdminDeps = {
      agents: app.get(AgentsStore),
      apiKeys: app.get(ApiKeysStore),
      grantKeys: app.get(GrantKeysService),
      revocations: app.get(GrantRevocationsStore),
      pats: app.get(PersonalAccessTokensStore),
      maxGrantTtlSeconds: env.GRANT_MAX_TTL_SECONDS,
      quotas: app.get(AgentQuotasStore),
      quotaDefaults: defaultLimits(env),
      natsCredentials: app.get(NatsCredentialsStore),
      webhooks: app.get(WebhooksStore),
      deliveryLog: app.get(WebhookDeliveryLog),
      adminTokens: app.get(AdminTokensStore),
      loginCodes: app.get(AdminLoginCodesStore),
      records: app.get(OperatorRecordsStore),
      pods: app.get(PodsStore),
      idempotency: app.get(IdempotencyStore),
      toolChanges: app.get(ToolChangesStore),
      audit: app.get(AuditStore),
      trail: app.get(AuditTrail),
      env,
    };
    const audit = app.get(AuditTrail);
    try {
      const output = await command(deps, parsed);
      auditCommand(audit, parsed, { ok: true });
      if (output.stream) {
        for await (const line of output.stream) {
          if (!process.stdout.write(`${line}\n`)) await new Promise((resolve) => process.stdout.once('drain', resolve));
        }
      } else process.stdout.write(`${json ? JSON.stringify(output.json, null, 2) : output.text}\n`);
      return output.exitCode ?? 0;
    } catch (error) {
      auditCommand(audit, parsed, { ok: false, error });
      throw error;
    } finally {
      // Written before the CLI exits: an action is on the trail when its command returns.
      await audit.flush();
    }
  } catch (error) {
    return fail(error, json);
  } finally {
    await app.close();
  }
}

function fail(error: unknown, json: boolean): number {
  let message = error instanceof ServiceError ? error.message : `unexpected error: ${(error as Error).message}`;
  if (/no grant signing key/.test((error as Error).message)) message = (error as Error).message;
  if (/relation .* does not exist/.test((error as Error).message)) {
    message = 'the database has no gateway tables yet: run `npm start` once (or node apps/gateway/dist/migrate.js)';
  }
  process.stderr.write(json ? `${JSON.stringify({ error: message })}\n` : `error: ${message}\n`);
  return 1;
}

/** Every flag a command takes; anything else is refused, with the usage. */
const FLAGS = {
  json: { type: 'boolean' },
  help: { type: 'boolean' },
  id: { type: 'string' },
  workspace: { type: 'string' },
  agent: { type: 'string' },
  label: { type: 'string' },
  task: { type: 'string' },
  tools: { type: 'string' },
  credentials: { type: 'string' },
  ttl: { type: 'string' },
  'concurrent-calls': { type: 'string' },
  'calls-per-second': { type: 'string' },
  sessions: { type: 'string' },
  streams: { type: 'string' },
  'api-keys': { type: 'string' },
  oauth: { type: 'string' },
  out: { type: 'string' },
  file: { type: 'string' },
  user: { type: 'string' },
  url: { type: 'string' },
  events: { type: 'string' },
  webhook: { type: 'string' },
  tool: { type: 'string' },
  caller: { type: 'string' },
  outcome: { type: 'string' },
  limit: { type: 'string' },
  before: { type: 'string' },
  key: { type: 'string' },
  status: { type: 'string' },
  open: { type: 'boolean' },
  kind: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  format: { type: 'string' },
  anchors: { type: 'string' },
  'tool-changes': { type: 'string' },
  'a2a-card': { type: 'string' },
  version: { type: 'string' },
} as const;

function parse(argv: string[]): Parsed | undefined {
  try {
    const { positionals, values } = parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true });
    return { words: positionals, flags: values };
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\n`);
    return undefined;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: Error) => {
    const message = error instanceof EnvValidationError ? error.message : `admin failed: ${error.message}`;
    process.stderr.write(`${message}\n`);
    process.exit(1);
  },
);

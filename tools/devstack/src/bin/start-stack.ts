import { join } from 'node:path';
import { createDatabase, databaseExists, postgresAnswers, withDatabase } from '../databases';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../embedded-postgres';
import { isListening } from '../ports';
import { natsServerAvailable, startAuthenticatedNats, type AuthenticatedNats } from '../nats-auth';
import { ensureGrantKeyFile } from '../grant-key-file';
import { prometheusAvailable, startLocalPrometheus, type LocalPrometheus } from '../local-prometheus';
import { exampleAgentCommands, newAgentCommands, writeNpmStartFile, type NpmStartFile } from '../npm-start-file';
import { Stack, workspaceRoot } from '../stack';

/**
 * `npm start`: the whole stack on local defaults. Uses DATABASE_URL / NATS_URL
 * when set; otherwise PostgreSQL on 127.0.0.1 (or an embedded one when none
 * answers). Without NATS_URL, and with the nats-server binary on the PATH, it
 * starts a nats-server of its own with NATS auth on (a free port, a fresh
 * operator, each app on its own credentials: libs/bus/src/auth/README.md), or
 * with NATS_CLUSTER=3 a cluster of three (loopback ports, the inbox stream on all
 * three); otherwise NATS on 127.0.0.1, with NATS_CREDS for every app if set. Migrates, creates the demo agent and a key,
 * starts the three apps and prints a ready curl line, the console's URL with a
 * one-time login link (the management API on ADMIN_PORT, default 9001), and the admin commands
 * that give a new agent (`NEW_AGENT_ID`, default my-agent) its NATS credentials
 * and an API key. The admin CLI finds this stack with no environment set:
 * `.data/npm-start.json` (npm-start-file.ts) says where it is while it runs.
 * With OBSERVABILITY=1 it also runs a Prometheus of its own (local-prometheus.ts; the
 * `prometheus` binary, PROMETHEUS_BIN to name another; PROMETHEUS_PORT, default 9090)
 * scraping the three apps with the alert rules loaded, and prints its URL; without the
 * binary it says how to install it and goes on without.
 */
const ROOT = workspaceRoot(__dirname);
const env = process.env;
const agentId = env.AGENT_ID ?? 'demo-agent';
const workspaceId = env.WORKSPACE_ID ?? 'demo';
const gatewayPort = env.GATEWAY_PORT ?? '3000';
/** The management API and the console (ADMIN_PORT; on 127.0.0.1 unless ADMIN_HOST says otherwise). */
const adminPort = env.ADMIN_PORT || '9001';
let natsUrl = env.NATS_URL ?? 'nats://127.0.0.1:4222';
const busPrefix = env.BUS_PREFIX ?? 'mcpgw';
const newAgentId = env.NEW_AGENT_ID ?? 'my-agent';
const observability = env.OBSERVABILITY === '1';
/** Set for a cluster of our own (NATS_CLUSTER); otherwise the message service reads INBOX_REPLICAS itself. */
let inboxReplicas: string | undefined;
/** The settings of the admin CLI that sign NATS credentials, when NATS_URL's server has auth on. */
const NATS_ADMIN_SETTINGS = [
  'NATS_ACCOUNT_PUBLIC_KEY',
  'NATS_ACCOUNT_SIGNING_SEED_FILE',
  'NATS_OPERATOR_SEED_FILE',
  'NATS_SYSTEM_CREDS',
] as const;

function say(line: string): void {
  process.stderr.write(`${line}\n`);
}

/**
 * DATABASE_URL when set; else the local server; else (or with POSTGRES_EMBEDDED=always)
 * an embedded one, its data in EMBEDDED_POSTGRES_DIR (default .data/postgres).
 */
async function database(): Promise<{ url: string; embedded?: EmbeddedPostgresHandle }> {
  if (env.DATABASE_URL) return { url: env.DATABASE_URL };
  const local = 'postgres://postgres@127.0.0.1:5432/postgres';
  let embedded: EmbeddedPostgresHandle | undefined;
  let admin = local;
  if (env.POSTGRES_EMBEDDED === 'always' || !(await postgresAnswers(local))) {
    const port = Number(env.EMBEDDED_POSTGRES_PORT ?? 54329);
    const dir = env.EMBEDDED_POSTGRES_DIR ?? join(ROOT, '.data', 'postgres');
    say(`Starting an embedded PostgreSQL on port ${port} (data in ${dir})`);
    embedded = await startEmbeddedPostgres(dir, port);
    admin = embedded.url;
  }
  if (!(await databaseExists(admin, 'mcpgw'))) await createDatabase(admin, 'mcpgw');
  return { url: withDatabase(admin, 'mcpgw'), embedded };
}

async function requireNats(): Promise<void> {
  const first = new URL(
    natsUrl
      .split(',')[0]
      .replace(/^nats:/, 'http:')
      .replace(/^tls:/, 'https:'),
  );
  if (await isListening(first.hostname, Number(first.port || 4222))) return;
  say(`No NATS server answers at ${natsUrl}. The stack needs NATS with JetStream:
  - Debian/Ubuntu: sudo apt-get install -y nats-server && nats-server -js
  - or Docker:     docker run -p 4222:4222 nats:2.10 -js
  - or set NATS_URL to a server you have.`);
  process.exit(1);
}

/** NATS_CLUSTER=3: a cluster of our own of that many nats-servers instead of one. */
function clusterNodes(): number {
  const nodes = Number(env.NATS_CLUSTER ?? 1);
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > 5) {
    say(`NATS_CLUSTER must be a number of nats-servers from 1 to 5, not ${env.NATS_CLUSTER}`);
    process.exit(1);
  }
  if (nodes > 1 && env.NATS_URL) {
    say(
      'NATS_CLUSTER starts a cluster of its own: leave NATS_URL unset (or point it at your cluster, without NATS_CLUSTER)',
    );
    process.exit(1);
  }
  return nodes;
}

/**
 * A nats-server of our own with auth on, when NATS_URL is not set and the binary is there;
 * with NATS_CLUSTER=3, a 3-node JetStream cluster on loopback ports, and the inbox stream
 * on all of them (INBOX_REPLICAS, unless set).
 */
async function ownNats(): Promise<AuthenticatedNats | undefined> {
  const nodes = clusterNodes();
  if (env.NATS_URL || !natsServerAvailable()) return undefined;
  const nats = await startAuthenticatedNats(busPrefix, { nodes });
  natsUrl = nats.url;
  if (nodes > 1) {
    inboxReplicas = env.INBOX_REPLICAS ?? String(Math.min(nodes, 3));
    say(
      `Started a ${nodes}-node nats-server cluster with NATS auth on at ${nats.url}, inbox stream R${inboxReplicas} (config, credentials and seeds in ${nats.dir})`,
    );
  } else {
    say(`Started nats-server with NATS auth on at ${nats.url} (config, credentials and seeds in ${nats.dir})`);
  }
  return nats;
}

/**
 * OBSERVABILITY=1: Prometheus on the apps' management URLs with rules.yml; undefined (and
 * a line saying why) when the binary is missing or it does not start: the stack runs on.
 */
async function ownPrometheus(targets: { job: string; managementUrl: string }[]): Promise<LocalPrometheus | undefined> {
  const binary = env.PROMETHEUS_BIN || 'prometheus';
  const available = prometheusAvailable(binary);
  if (!available.ok) {
    say(`OBSERVABILITY=1: ${available.reason}. Going on without Prometheus.`);
    return undefined;
  }
  try {
    return await startLocalPrometheus({
      binary,
      port: Number(env.PROMETHEUS_PORT || 9090),
      targets,
      ruleFiles: [join(ROOT, 'deploy/observability/prometheus/rules.yml')],
    });
  } catch (error) {
    say(`OBSERVABILITY=1: Prometheus did not start (${(error as Error).message}). Going on without it.`);
    return undefined;
  }
}

async function main(): Promise<void> {
  const nats = await ownNats();
  if (!nats) await requireNats();
  const db = await database();
  const grantKeyFile = await ensureGrantKeyFile(
    env.GRANT_SIGNING_KEY_FILE ?? join(ROOT, '.data', 'grant-signing-key.json'),
  );
  const natsAdminEnv: Record<string, string | undefined> =
    nats?.adminEnv ?? Object.fromEntries(NATS_ADMIN_SETTINGS.map((name) => [name, env[name]]));
  let stackFile: NpmStartFile | undefined = writeNpmStartFile(ROOT, {
    DATABASE_URL: db.url,
    NATS_URL: natsUrl,
    NATS_CREDS: nats ? await nats.credsFile({ role: 'gateway' }) : env.NATS_CREDS,
    BUS_PREFIX: busPrefix,
    GRANT_SIGNING_KEY_FILE: grantKeyFile,
    ...natsAdminEnv,
  });
  process.once('exit', () => stackFile?.remove());
  const stack = new Stack({
    databaseUrl: db.url,
    natsUrl,
    busPrefix,
    echoLogs: true,
    natsCreds:
      nats && ((app, agent) => nats.credsFile(app === 'agent-pod' ? { role: 'agent', agentId: agent } : { role: app })),
    env: {
      GRANT_SIGNING_KEY_FILE: grantKeyFile,
      ...nats?.adminEnv,
      ...(inboxReplicas ? { INBOX_REPLICAS: inboxReplicas } : {}),
    },
  });
  let prometheus: LocalPrometheus | undefined;
  const shutdown = async () => {
    say('stopping…');
    stackFile?.remove();
    stackFile = undefined;
    await prometheus?.stop();
    await stack.stop();
    await nats?.stop();
    await db.embedded?.stop();
    process.exit(0);
  };
  // embedded-postgres installs its own exit hooks; the launcher stops things in order itself:
  // the apps first (they drain), the database last.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(signal);
    process.once(signal, () => void shutdown());
  }

  await stack.migrate();
  await stack.admin('agent', 'create', '--id', agentId, '--workspace', workspaceId);
  const key = await stack.admin<{ id: string; key: string }>(
    'apikey',
    'create',
    '--agent',
    agentId,
    '--label',
    'npm start',
  );
  // Each app's /health, /ready and /metrics: the apps' default management ports, unless set.
  const messageService = await stack.startMessageService({
    MESSAGE_SERVICE_PORT: env.MESSAGE_SERVICE_PORT ?? '3100',
    MANAGEMENT_PORT: env.MESSAGE_SERVICE_MANAGEMENT_PORT ?? '9100',
  });
  const gateway = await stack.startGateway({
    GATEWAY_PORT: gatewayPort,
    MANAGEMENT_PORT: env.GATEWAY_MANAGEMENT_PORT ?? '9000',
    ADMIN_PORT: adminPort,
  });
  const pod = await stack.startPod({
    AGENT_ID: agentId,
    WORKSPACE_ID: workspaceId,
    MANAGEMENT_PORT: env.AGENT_POD_MANAGEMENT_PORT ?? '9200',
  });
  if (observability)
    prometheus = await ownPrometheus([
      { job: 'gateway', managementUrl: gateway.process.managementUrl! },
      { job: 'message-service', managementUrl: messageService.process.managementUrl! },
      { job: 'agent-pod', managementUrl: pod.managementUrl! },
    ]);

  const grant = await stack.admin<{ id: string; grant: string }>(
    'grant',
    'mint',
    '--workspace',
    workspaceId,
    '--agent',
    agentId,
    '--task',
    'demo-task',
    '--tools',
    'web_search,echo,crm_lookup',
    '--credentials',
    'crm',
    '--ttl',
    '3600',
  );
  // The console, and a link that logs this terminal's operator in once (a one-time code, 10 minutes;
  // printed here and nowhere else: the admin CLI's output is read, not echoed).
  const consoleUrl = `http://127.0.0.1:${adminPort}/console/`;
  const login = await stack.admin<{ url: string; expires_at: string }>('console', 'login-link', '--url', consoleUrl);
  const withCredentials = Boolean(natsAdminEnv.NATS_ACCOUNT_SIGNING_SEED_FILE);
  const credsFile = `.data/${newAgentId}.creds`;
  const newAgent = newAgentCommands({
    agentId: newAgentId,
    workspaceId,
    credsFile,
    withCredentials,
    prefix: stackFile.commandPrefix,
  });
  const newAgentUrl = `${gateway.url.replace('127.0.0.1', 'localhost')}/${newAgentId}/mcp`;
  const podConnects = withCredentials
    ? `connect to ${natsUrl} with NATS_CREDS=${credsFile} (reply inbox prefix _INBOX.${busPrefix}.agent.${newAgentId})`
    : `connect to ${natsUrl}${env.NATS_CREDS ? ' (with credentials of your NATS authority)' : ''}`;
  const url = `${gateway.url.replace('127.0.0.1', 'localhost')}/${agentId}/mcp`;
  const grantUrl = `${gateway.url.replace('127.0.0.1', 'localhost')}/workspaces/${workspaceId}/agents/${agentId}/mcp/http`;
  say(`
The stack is up.
  MCP endpoint  ${url}
  agent         ${agentId} (workspace ${workspaceId})
  API key       ${key.key}   (id ${key.id}; shown once)
  metrics       ${gateway.process.managementUrl!.replace('127.0.0.1', 'localhost')}/metrics (gateway; /ready and /health beside it)
  console       ${consoleUrl}${prometheus ? `\n  prometheus    ${prometheus.url}/targets (the three apps, the alert rules of deploy/observability/prometheus/rules.yml)` : ''}
  login link    ${login.url}
                (one-time: it logs one browser in, once, until ${login.expires_at};
                 later: npm run admin -- console login-link --url ${consoleUrl})

Try it:
  curl -s ${url} -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \\
    -H 'X-Agent-API-Key: ${key.key}' \\
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"web_search","arguments":{"query":"nats"}}}'

The task-scoped endpoint, with a RuntimeGrant for task demo-task (web_search, echo, crm_lookup; 1 hour):
  curl -s ${grantUrl} -H 'content-type: application/json' \\
    -H 'Authorization: Bearer ${grant.grant}' \\
    -d '{"jsonrpc":"2.0","id":"req_01","method":"tools/call","params":{"name":"crm_lookup","call_id":"call_01","arguments":{"customer_id":"C-1001"}}}'
  (mint more: npm run admin -- grant mint --workspace ${workspaceId} --agent ${agentId} --task T --tools echo)

An agent of your own, against this stack (the admin CLI finds it through ${stackFile.path} while it runs):
${newAgent.map((line) => `  ${line}`).join('\n')}
  Its pods ${podConnects}
  and register on ${busPrefix}.registry.agents.${newAgentId}.register in workspace ${workspaceId} (docs/asyncapi.yaml);
  clients call ${newAgentUrl} with the key apikey create prints (once).
  Run an example agent as it (examples/agent-ts, examples/agent-python):
${exampleAgentCommands({ agentId: newAgentId, natsUrl, busPrefix, credsFile: withCredentials ? credsFile : undefined })
  .map((line) => `    ${line}`)
  .join('\n')}

Ctrl-C stops everything.
`);
}

main().catch((error: Error) => {
  say(`npm start failed: ${error.message}`);
  process.exit(1);
});

import { createAuthority, credsClaims, issueCredentials, serverConfig, type BusIdentity } from '@mcpgw/bus';
import { AGENT_ID_PATTERN } from '@mcpgw/contracts';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

/**
 * `node apps/gateway/dist/admin/nats-init.js <dir>`: a new NATS authority for a
 * deployment (operator, account with JetStream, system account; see
 * libs/bus/src/auth/README.md) and everything made from it, as files in <dir>:
 *
 *   nats-server.conf         operator mode, full resolver in <dir>/resolver, JetStream in --store
 *   gateway.creds, message-service.creds, agent-<id>.creds   NATS_CREDS of each app (mode 0600)
 *   system.creds             NATS_SYSTEM_CREDS (the admin CLI pushes revocations with it)
 *   account-signing.seed     NATS_ACCOUNT_SIGNING_SEED_FILE (signs agent credentials)
 *   operator.seed            NATS_OPERATOR_SEED_FILE (re-signs the account to revoke; keep offline)
 *   account.pub              NATS_ACCOUNT_PUBLIC_KEY (may name this file)
 *   agent-users.json         the agents' users made here, public keys only: [{user, agent_id, issued_at}];
 *                            `admin agent credentials record --file` records them in the gateway's
 *                            database once it is migrated, so that `revoke --agent` finds them
 *
 * Does nothing when <dir>/nats-server.conf exists: the authority is made once (it then
 * only writes agent-users.json if missing, from the agent-*.creds files in <dir>, for a
 * directory made before that file existed). Prints file names only, never a secret.
 */
function main(argv: string[]): number {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      host: { type: 'string', default: '0.0.0.0' },
      port: { type: 'string', default: '4222' },
      store: { type: 'string', default: '/data' },
      prefix: { type: 'string', default: process.env.BUS_PREFIX || 'mcpgw' },
      agents: { type: 'string', default: 'demo-agent' },
    },
  });
  const dir = positionals[0];
  if (!dir) {
    process.stderr.write('usage: nats-init <dir> [--host H] [--port P] [--store DIR] [--prefix P] [--agents a,b]\n');
    return 2;
  }
  const agents = values.agents.split(',').filter(Boolean);
  const bad = agents.filter((a) => !AGENT_ID_PATTERN.test(a));
  if (bad.length) {
    process.stderr.write(`error: bad agent id(s): ${bad.join(', ')}\n`);
    return 2;
  }
  if (existsSync(join(dir, 'nats-server.conf'))) {
    process.stderr.write(`${dir}/nats-server.conf exists: the NATS authority is already made\n`);
    if (!existsSync(join(dir, AGENT_USERS))) writeAgentUsers(dir, agentUsersOfCredsFiles(dir));
    return 0;
  }
  void write(dir, values, agents).then(
    () => process.exit(0),
    (error: Error) => {
      process.stderr.write(`error: ${error.message}\n`);
      process.exit(1);
    },
  );
  return -1;
}

async function write(
  dir: string,
  options: { host: string; port: string; store: string; prefix: string },
  agents: string[],
): Promise<void> {
  mkdirSync(join(dir, 'resolver'), { recursive: true });
  const authority = await createAuthority();
  const file = (name: string, text: string) => writeFileSync(join(dir, name), text, { mode: 0o600 });
  const identities: [string, BusIdentity][] = [
    ['gateway', { role: 'gateway' }],
    ['message-service', { role: 'message-service' }],
    ...agents.map((agentId): [string, BusIdentity] => [`agent-${agentId}`, { role: 'agent', agentId }]),
  ];
  const agentUsers: AgentUser[] = [];
  for (const [name, identity] of identities) {
    const issued = await issueCredentials({
      account: authority.account,
      signingSeed: authority.accountSigningSeed,
      prefix: options.prefix,
      identity,
    });
    file(`${name}.creds`, issued.creds);
    if (identity.role === 'agent')
      agentUsers.push({ user: issued.user, agent_id: identity.agentId, issued_at: issued.issuedAt });
  }
  writeAgentUsers(dir, agentUsers);
  file('system.creds', authority.systemCreds);
  file('account-signing.seed', authority.accountSigningSeed);
  file('operator.seed', authority.operatorSeed);
  file('account.pub', authority.account);
  // Written last: its presence means the rest is there.
  file(
    'nats-server.conf',
    serverConfig({
      authority,
      host: options.host,
      port: Number(options.port),
      storeDir: options.store,
      resolverDir: join(dir, 'resolver'),
    }),
  );
  process.stderr.write(`NATS authority made in ${dir} (account ${authority.account})\n`);
}

/** What `admin agent credentials record` reads: public keys only, no secret. */
const AGENT_USERS = 'agent-users.json';
interface AgentUser {
  user: string;
  agent_id: string;
  issued_at: number;
  expires_at?: number;
}

function writeAgentUsers(dir: string, users: AgentUser[]): void {
  writeFileSync(join(dir, AGENT_USERS), `${JSON.stringify(users, null, 2)}\n`, { mode: 0o644 });
}

/** The users of the agent-<id>.creds files in <dir> (their JWTs' claims; the seeds are not read out). */
function agentUsersOfCredsFiles(dir: string): AgentUser[] {
  const users: AgentUser[] = [];
  for (const name of readdirSync(dir).sort()) {
    const agentId = /^agent-(.+)\.creds$/.exec(name)?.[1];
    if (!agentId || !AGENT_ID_PATTERN.test(agentId) || !statSync(join(dir, name)).isFile()) continue;
    const claims = credsClaims(readFileSync(join(dir, name), 'utf8'));
    if (claims.name !== `agent.${agentId}` || !claims.sub || !claims.iat) continue;
    users.push({
      user: claims.sub,
      agent_id: agentId,
      issued_at: claims.iat,
      ...(claims.exp ? { expires_at: claims.exp } : {}),
    });
  }
  return users;
}

const code = main(process.argv.slice(2));
if (code >= 0) process.exit(code);

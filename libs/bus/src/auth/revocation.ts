import { connect, credsAuthenticator, type NatsConnection } from 'nats';
import { withRevocations } from './authority';
import { natsServers } from '../servers';

/*
 * Pushing an account JWT to the servers through the system account: the full
 * resolver stores it and every server applies it at once (a revoked user's
 * connections are closed, and it cannot connect again).
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const TIMEOUT_MS = 5_000;

/** A connection as a user of the system account. */
export async function connectSystem(url: string, systemCreds: string): Promise<NatsConnection> {
  return connect({
    servers: natsServers(url),
    name: 'mcpgw-admin',
    authenticator: credsAuthenticator(encoder.encode(systemCreds)),
    // Not 0 (nor 1): nats.js 2.29 then drops two servers from the list for one that refused
    // its first connection, often a live one, so a list with a server down failed at random.
    // With -1 the first connection tries each server once and fails fast when none answers;
    // every request here has its own timeout, and the connection is closed after them.
    maxReconnectAttempts: -1,
  });
}

/** The account JWT the servers hold now (the resolver's copy, with earlier revocations). */
export async function currentAccountJwt(nc: NatsConnection, account: string): Promise<string> {
  const answer = await nc.request(`$SYS.REQ.ACCOUNT.${account}.CLAIMS.LOOKUP`, new Uint8Array(), {
    timeout: TIMEOUT_MS,
  });
  const jwt = decoder.decode(answer.data).trim();
  if (!jwt.startsWith('ey')) throw new Error(`the servers do not know account ${account}`);
  return jwt;
}

/** Store an account JWT on the servers; throws with the server's message when refused. */
export async function pushAccountJwt(nc: NatsConnection, accountJwt: string): Promise<void> {
  const answer = await nc.request('$SYS.REQ.CLAIMS.UPDATE', encoder.encode(accountJwt), { timeout: TIMEOUT_MS });
  const reply = JSON.parse(decoder.decode(answer.data)) as {
    data?: { code?: number; message?: string };
    error?: { description?: string };
  };
  if (reply.error || reply.data?.code !== 200) {
    throw new Error(`account update refused: ${reply.error?.description ?? reply.data?.message ?? 'no reason given'}`);
  }
}

/** Revoke users (by public key) now: fetch the account JWT, add them, sign with the operator, push. */
export async function revokeUsers(options: {
  url: string;
  systemCreds: string;
  operatorSeed: string;
  account: string;
  users: string[];
}): Promise<void> {
  const nc = await connectSystem(options.url, options.systemCreds);
  try {
    const current = await currentAccountJwt(nc, options.account);
    await pushAccountJwt(nc, await withRevocations(current, options.operatorSeed, options.users));
  } finally {
    await nc.close();
  }
}

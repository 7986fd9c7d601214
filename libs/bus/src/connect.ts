import { connect, type Authenticator, type NatsConnection } from 'nats';
import { readFileSync } from 'node:fs';
import { meterConnection } from './bus-meter';
import { connectionEvents } from './connection-status';
import { coalesceWrites } from './write-coalescing';
import { settleRequestsQuietly } from './request-settling';
import { busLog } from './bus-log';
import type { BusOptions } from './bus-options';
import { credsClaims, noteCredsExpiry } from './auth/creds-file';
import { credsSigner } from './auth/creds-signer';
import { inboxPrefix } from './auth/permissions';
import { natsServers } from './servers';

/**
 * One app's (or one agent's) connection to NATS: reconnects forever, asks from
 * its identity's private inbox, meters what it sends and receives, coalesces
 * small writes, and logs connection events and permission violations. The
 * apps get it through `BusModule`; the agent SDK calls it directly.
 */
export async function connectBus(options: BusOptions): Promise<NatsConnection> {
  const inbox = inboxPrefix(options.prefix, options.identity);
  const authenticator = options.credsFile ? credentialsFrom(options.credsFile, inbox) : undefined;
  const nc = await connect({
    servers: natsServers(options.url),
    name: options.name,
    authenticator,
    inboxPrefix: inbox,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    // No stack capture per request: it costs on every call and only helps debugging.
    noAsyncTraces: true,
  });
  meterConnection(nc, options.prefix);
  coalesceWrites(nc);
  settleRequestsQuietly();
  // Counted for /metrics, followed for /ready (connection-status.ts), and logged.
  connectionEvents(nc, (type, data) => busLog.warn(`nats ${type} (${String(data)})`));
  void (async () => {
    for await (const status of nc.status()) {
      // The server refused a publish or a subscription: these credentials lack a permission.
      const denied = (status as { permissionContext?: { operation: string; subject: string } }).permissionContext;
      if (status.type === 'error' && denied) {
        busLog.error({ msg: 'nats permissions violation', operation: denied.operation, subject: denied.subject });
      }
    }
  })();
  return nc;
}

/**
 * The credentials file is read once, at start-up; a missing one stops the app
 * with its name, and so do credentials of another identity. Replies to our
 * requests come to the identity's private inbox prefix
 * (`_INBOX.<prefix>.<identity>`, auth/permissions.ts): nobody else may
 * subscribe there, and the services answer nowhere else.
 */
function credentialsFrom(path: string, inbox: string): Authenticator {
  let creds: string;
  try {
    creds = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`NATS_CREDS: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  let allowed: string[];
  try {
    allowed = credsClaims(creds).subAllow;
    noteCredsExpiry(creds);
  } catch {
    throw new Error(`NATS_CREDS: ${path} is not a NATS credentials file`);
  }
  const theirs = allowed.find((s) => s.startsWith('_INBOX.'));
  // An unrestricted user (no allow list) may use any inbox.
  if (allowed.length && theirs !== `${inbox}.>`) {
    throw new Error(`NATS_CREDS: ${path} holds credentials for ${theirs ?? 'no reply inbox'}, not for ${inbox}`);
  }
  try {
    return credsSigner(creds);
  } catch {
    throw new Error(`NATS_CREDS: ${path} is not a NATS credentials file`);
  }
}

import { decode, encodeAccount, encodeOperator, encodeUser, fmtCreds, type Account } from '@nats-io/jwt';
import { createAccount, createOperator, createUser, fromPublic, fromSeed, type KeyPair } from '@nats-io/nkeys';
import { identityName, permissionsFor, type BusIdentity } from './permissions';
export { credsClaims } from './creds-file';

/*
 * NATS decentralized JWT auth (operator mode): one operator, one account for
 * the whole deployment (JetStream enabled in its JWT), a system account for
 * the server's own traffic and for pushing account updates, and one user per
 * process identity, signed by the account's signing key, with the permissions
 * of permissions.ts. See README.md beside this file.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** No limit, in every field the server reads from an account JWT. */
const UNLIMITED = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };
const JETSTREAM = { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 };

/** Everything a NATS server and the tools that issue credentials need; seeds are secrets. */
export interface NatsAuthority {
  operatorSeed: string;
  operatorJwt: string;
  /** The application account's public key (its identity). */
  account: string;
  accountJwt: string;
  /** The seed of the account's signing key: it signs user credentials. */
  accountSigningSeed: string;
  systemAccount: string;
  systemAccountJwt: string;
  /** Credentials of a user of the system account: pushes account updates (revocations). */
  systemCreds: string;
}

/** A fresh operator, account and system account (the dev stack and tests make one per run). */
export async function createAuthority(name = 'mcpgw'): Promise<NatsAuthority> {
  const operator = createOperator();
  const account = createAccount();
  const signing = createAccount();
  const system = createAccount();
  const operatorJwt = await encodeOperator(name, operator, { system_account: system.getPublicKey() });
  const accountJwt = await encodeAccount(
    name,
    account,
    { signing_keys: [signing.getPublicKey()], limits: { ...UNLIMITED, ...JETSTREAM } },
    { signer: operator },
  );
  const systemAccountJwt = await encodeAccount('SYS', system, { limits: UNLIMITED }, { signer: operator });
  const systemUser = createUser();
  const systemCreds = decoder.decode(fmtCreds(await encodeUser('sys', systemUser, system), systemUser));
  return {
    operatorSeed: seedOf(operator),
    operatorJwt,
    account: account.getPublicKey(),
    accountJwt,
    accountSigningSeed: seedOf(signing),
    systemAccount: system.getPublicKey(),
    systemAccountJwt,
    systemCreds,
  };
}

/** Issued credentials: the creds file's text (a secret) and the user's public key (to revoke it by). */
export interface IssuedCredentials {
  identity: string;
  user: string;
  creds: string;
  /** Seconds since the epoch (the JWT's `iat`). */
  issuedAt: number;
  /** Seconds since the epoch (the JWT's `exp`), after which the servers refuse and disconnect the user; absent: never. */
  expiresAt?: number;
}

/**
 * Credentials for one identity under one bus prefix, signed with the account's signing key.
 * With `expiresInSeconds` the user JWT carries `exp`: the servers refuse it from then on
 * and close its connections when it expires, with no revocation needed.
 */
export async function issueCredentials(options: {
  account: string;
  signingSeed: string;
  prefix: string;
  identity: BusIdentity;
  expiresInSeconds?: number;
}): Promise<IssuedCredentials> {
  const ttl = options.expiresInSeconds;
  if (ttl !== undefined && !(Number.isSafeInteger(ttl) && ttl > 0))
    throw new Error('expiresInSeconds must be a whole number of seconds above 0');
  const user = createUser();
  const perms = permissionsFor(options.prefix, options.identity);
  const encode = (exp?: number) =>
    encodeUser(
      identityName(options.identity),
      user,
      fromPublic(options.account),
      {
        pub: { allow: perms.pub },
        sub: { allow: perms.sub },
      },
      { signer: keyFromSeed(options.signingSeed, 'signing seed'), ...(exp !== undefined ? { exp } : {}) },
    );
  let jwt = await encode(ttl !== undefined ? Math.floor(Date.now() / 1000) + ttl : undefined);
  // The library stamps `iat` itself, a moment later: across a second's edge, sign again from it.
  const stamped = decode<unknown>(jwt);
  if (ttl !== undefined && stamped.exp !== stamped.iat + ttl) jwt = await encode(stamped.iat + ttl);
  const claims = decode<unknown>(jwt);
  return {
    identity: identityName(options.identity),
    user: user.getPublicKey(),
    creds: decoder.decode(fmtCreds(jwt, user)),
    issuedAt: claims.iat,
    ...(claims.exp ? { expiresAt: claims.exp } : {}),
  };
}

/**
 * The account JWT again, signed by the operator, with these users revoked
 * (credentials issued to them up to now stop working). Push it with
 * `pushAccountJwt` (revocation.ts).
 */
export async function withRevocations(accountJwt: string, operatorSeed: string, users: string[]): Promise<string> {
  const claims = decode<Account>(accountJwt);
  const now = Math.floor(Date.now() / 1000);
  const revocations = { ...(claims.nats.revocations ?? {}) };
  for (const user of users) revocations[user] = now;
  return encodeAccount(
    claims.name,
    fromPublic(claims.sub),
    { ...claims.nats, revocations },
    { signer: keyFromSeed(operatorSeed, 'operator seed') },
  );
}

/** The users an account JWT revokes. */
export function revokedUsers(accountJwt: string): string[] {
  return Object.keys(decode<Account>(accountJwt).nats.revocations ?? {});
}

/**
 * A nats-server configuration in operator mode with a full resolver: the
 * accounts are preloaded, and updates pushed through the system account
 * (revocations) are kept in `resolverDir`, so they outlive a restart. With
 * `cluster`, one node of a JetStream cluster: every node has the same
 * authority and resolver settings, a `serverName` and a store of its own, and
 * routes to the others (a full resolver passes account updates to them).
 */
export function serverConfig(options: {
  authority: Pick<NatsAuthority, 'operatorJwt' | 'account' | 'accountJwt' | 'systemAccount' | 'systemAccountJwt'>;
  port: number;
  host?: string;
  storeDir: string;
  resolverDir: string;
  serverName?: string;
  cluster?: { name: string; port: number; routes: string[] };
}): string {
  const { authority: a, cluster } = options;
  const host = options.host ?? '127.0.0.1';
  return [
    ...(options.serverName ? [`server_name: ${JSON.stringify(options.serverName)}`] : []),
    `host: ${JSON.stringify(host)}`,
    `port: ${options.port}`,
    ...(cluster
      ? [
          `cluster: {`,
          `  name: ${JSON.stringify(cluster.name)}`,
          `  listen: ${JSON.stringify(`${host}:${cluster.port}`)}`,
          `  routes: [${cluster.routes.map((route) => JSON.stringify(route)).join(', ')}]`,
          `}`,
        ]
      : []),
    `operator: ${a.operatorJwt}`,
    `system_account: ${a.systemAccount}`,
    `resolver: { type: full, dir: ${JSON.stringify(options.resolverDir)}, allow_delete: false, interval: "2m" }`,
    `resolver_preload: {`,
    `  ${a.account}: ${a.accountJwt}`,
    `  ${a.systemAccount}: ${a.systemAccountJwt}`,
    `}`,
    `jetstream: { store_dir: ${JSON.stringify(options.storeDir)} }`,
    '',
  ].join('\n');
}

function seedOf(kp: KeyPair): string {
  return decoder.decode(kp.getSeed());
}

function keyFromSeed(seed: string, what: string): KeyPair {
  try {
    return fromSeed(encoder.encode(seed.trim()));
  } catch {
    throw new Error(`the ${what} is not a valid NATS seed`);
  }
}

/**
 * What a session must be for a connection to be kept, as libpq's
 * `target_session_attrs` (`prefer-standby` is not supported). `any` (libpq's
 * default) takes the first host that accepts a connection.
 */
export type TargetSessionAttrs = 'any' | 'read-write' | 'read-only' | 'primary' | 'standby';

const TARGETS: readonly TargetSessionAttrs[] = ['any', 'read-write', 'read-only', 'primary', 'standby'];

export interface DatabaseHost {
  host: string;
  port: number;
}

/** A `DATABASE_URL` split into its hosts; every other part is kept as written. */
export interface DatabaseUrl {
  hosts: DatabaseHost[];
  targetSessionAttrs: TargetSessionAttrs;
  /**
   * True when a connection needs the host-selecting client (several hosts, or a
   * session to check); false for a plain URL, which is then used as it is.
   */
  selectsHost: boolean;
  /**
   * The URL with only host `index` (and without `target_session_attrs`):
   * node-postgres parses it as usual, so user, password, database and every other
   * parameter (`sslmode`, …) mean what they mean in a single-host URL.
   */
  hostUrl(index: number): string;
  /** `host:port`, for messages (never the credentials). */
  label(index: number): string;
}

const DEFAULT_PORT = 5432;
/** scheme, user info (with its `@`), host list, the rest (path, query, fragment). */
const URL_PARTS = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)(.*)$/i;

/**
 * Parses libpq's multi-host URL form,
 * `postgres://user:pass@h1:5432,h2:5433/db?target_session_attrs=read-write`,
 * which `new URL` (and so node-postgres and TypeORM) reject. A URL of one host
 * and no `target_session_attrs` is returned as it is (`selectsHost` false), so
 * existing configurations behave exactly as before.
 */
export function parseDatabaseUrl(url: string): DatabaseUrl {
  const parts = URL_PARTS.exec(url);
  if (!parts) return plain(url);
  const [, scheme, userInfo = '', hostList, rest] = parts;
  const hosts = hostList.split(',').map(parseHost);
  const { target, restWithout } = takeTarget(rest);
  if (hosts.length === 1 && target === 'any' && restWithout === rest) return plain(url, hosts);
  return {
    hosts,
    targetSessionAttrs: target,
    selectsHost: hosts.length > 1 || target !== 'any',
    hostUrl: (index) => `${scheme}${userInfo}${hostPart(hosts[index])}${restWithout}`,
    label: (index) => hostPart(hosts[index]),
  };
}

/** A host as a URL writes it: IPv6 in brackets, a socket directory encoded. */
function hostPart({ host, port }: DatabaseHost): string {
  if (host.startsWith('/')) return `${encodeURIComponent(host)}:${port}`;
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function plain(url: string, hosts?: DatabaseHost[]): DatabaseUrl {
  const found = hosts ?? [{ host: '', port: DEFAULT_PORT }];
  return {
    hosts: found,
    targetSessionAttrs: 'any',
    selectsHost: false,
    hostUrl: () => url,
    label: () => `${found[0].host}:${found[0].port}`,
  };
}

function parseHost(entry: string): DatabaseHost {
  const bracketed = /^\[([^\]]+)\](?::(\d*))?$/.exec(entry);
  const [, host, port] = bracketed ?? /^([^:]*)(?::(\d*))?$/.exec(entry) ?? [];
  if (host === undefined) throw new Error(`DATABASE_URL: cannot read the host "${entry}"`);
  return { host: decodeURIComponent(host), port: port ? Number(port) : DEFAULT_PORT };
}

/** `target_session_attrs` out of the query string (validated), the rest of it kept in order. */
function takeTarget(rest: string): { target: TargetSessionAttrs; restWithout: string } {
  const queryAt = rest.indexOf('?');
  if (queryAt < 0) return { target: 'any', restWithout: rest };
  const hashAt = rest.indexOf('#', queryAt);
  const query = rest.slice(queryAt + 1, hashAt < 0 ? undefined : hashAt);
  let target: TargetSessionAttrs = 'any';
  const kept = query.split('&').filter((pair) => {
    const [key, value = ''] = pair.split('=');
    if (decodeURIComponent(key) !== 'target_session_attrs') return true;
    const wanted = decodeURIComponent(value) as TargetSessionAttrs;
    if (!TARGETS.includes(wanted)) {
      throw new Error(`DATABASE_URL: target_session_attrs must be one of ${TARGETS.join(', ')} (not "${wanted}")`);
    }
    target = wanted;
    return false;
  });
  const path = rest.slice(0, queryAt);
  const fragment = hashAt < 0 ? '' : rest.slice(hashAt);
  return { target, restWithout: `${path}${kept.length ? `?${kept.join('&')}` : ''}${fragment}` };
}

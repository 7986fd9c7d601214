import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import { unsafeUrl } from './issuer-urls';

/** How long an issuer whose discovery failed is left alone before it is tried again. */
const DISCOVERY_RETRY_MS = 5_000;
export const FETCH_TIMEOUT_MS = 5_000;
/** Keys are read again this often even when every token's key id is known (a revoked key drops out). */
const JWKS_MAX_AGE_MS = 10 * 60_000;

/**
 * Each trusted issuer's signing keys: its metadata found by discovery (RFC 8414
 * `oauth-authorization-server`, else OpenID `openid-configuration`), then its
 * `jwks_uri`, cached. A key id the cache lacks fetches the set again, at most
 * once per `refetchMs` (a rotation is picked up without a restart; made-up key
 * ids cost no fetch storm). Discovery happens on the first token of an issuer.
 */
export class IssuerKeys {
  private readonly metadata = new Map<string, Promise<Record<string, unknown>>>();
  private readonly keys = new Map<string, Promise<JWTVerifyGetKey>>();

  constructor(private readonly refetchMs: number) {}

  /** The issuer's metadata, found once (a failure answers at once for a while, then discovery is tried again). */
  metadataOf(issuer: string): Promise<Record<string, unknown>> {
    return remembered(this.metadata, issuer, () => discoverMetadata(issuer));
  }

  forIssuer(issuer: string): Promise<JWTVerifyGetKey> {
    return remembered(this.keys, issuer, async () => {
      const jwksUri = (await this.metadataOf(issuer)).jwks_uri;
      if (typeof jwksUri !== 'string') throw new Error(`${issuer}: its metadata names no jwks_uri`);
      const problem = unsafeUrl(jwksUri);
      if (problem) throw new Error(`${issuer}: jwks_uri ${jwksUri} ${problem}`);
      return createRemoteJWKSet(new URL(jwksUri), {
        cooldownDuration: this.refetchMs,
        cacheMaxAge: JWKS_MAX_AGE_MS,
        timeoutDuration: FETCH_TIMEOUT_MS,
      });
    });
  }
}

/** `make()`'s promise, kept per key; a rejected one is dropped after DISCOVERY_RETRY_MS. */
function remembered<T>(cache: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let entry = cache.get(key);
  if (!entry) {
    entry = make();
    cache.set(key, entry);
    entry.catch(() => setTimeout(() => cache.delete(key), DISCOVERY_RETRY_MS).unref());
  }
  return entry;
}

/**
 * The issuer's metadata from the first well-known document that answers, in the
 * order the MCP authorization spec gives; its `issuer` must be this issuer,
 * exactly (RFC 8414 §3.3: a document about another issuer is not taken).
 */
export async function discoverMetadata(issuer: string): Promise<Record<string, unknown>> {
  const failures: string[] = [];
  for (const url of metadataUrls(issuer)) {
    try {
      const response = await fetch(url, {
        headers: { accept: 'application/json' },
        redirect: 'error',
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
      if (!response.ok) {
        failures.push(`${url}: HTTP ${response.status}`);
        continue;
      }
      const metadata = (await response.json()) as Record<string, unknown>;
      if (metadata.issuer !== issuer)
        throw new Error(`${url} describes issuer ${String(metadata.issuer)}, not ${issuer}`);
      return metadata;
    } catch (error) {
      failures.push(`${url}: ${(error as Error).message}`);
    }
  }
  throw new Error(`no metadata for issuer ${issuer} (${failures.join('; ')})`);
}

/** RFC 8414 and OpenID Connect discovery URLs, path-inserted first, then OpenID's path-appended form. */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, '');
  const urls = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}/.well-known/openid-configuration${path}`,
  ];
  if (path) urls.push(`${url.origin}${path}/.well-known/openid-configuration`);
  return urls;
}

import { createHash } from 'node:crypto';
import { FETCH_TIMEOUT_MS, type IssuerKeys } from './issuer-keys';
import { unsafeUrl } from './issuer-urls';

/** Introspections of tokens not in the cache, per second: a flood of made-up tokens is not a flood at the issuer. */
const INTROSPECTIONS_PER_SECOND = 50;
/** An active token is asked about again after this long at most (a revocation is heard within it). */
const ACTIVE_FOR_MS = 60_000;
/** An inactive or unknown token is answered from the cache this long. */
const INACTIVE_FOR_MS = 10_000;
const CACHE_MAX = 10_000;

export interface IntrospectionSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

export type Introspected =
  | { active: true; claims: Record<string, unknown> }
  | { active: false }
  /** The issuer could not be asked (down, or over the per-second budget). */
  | { unavailable: string };

/**
 * Opaque access tokens, read by asking their issuer (RFC 7662) as a
 * confidential client. Answers are kept by the token's SHA-256 (never the
 * token): an active one until it expires or for a minute, whichever is
 * sooner; an inactive one for 10 s.
 */
export class TokenIntrospection {
  private readonly cache = new Map<string, { answer: Introspected; until: number }>();
  private budget = { second: 0, count: 0 };

  constructor(
    private readonly settings: IntrospectionSettings,
    private readonly issuers: IssuerKeys,
  ) {}

  get issuer(): string {
    return this.settings.issuer;
  }

  async introspect(token: string): Promise<Introspected> {
    const key = createHash('sha256').update(token).digest('base64url');
    const cached = this.cache.get(key);
    if (cached && cached.until > Date.now()) return cached.answer;
    if (!this.takeBudget()) return { unavailable: 'too many unknown tokens to ask the issuer about' };
    let answer: { active: true; claims: Record<string, unknown> } | { active: false; claims?: undefined };
    try {
      answer = await this.ask(token);
    } catch (error) {
      return { unavailable: (error as Error).message };
    }
    const exp = answer.claims && typeof answer.claims.exp === 'number' ? answer.claims.exp * 1000 : Infinity;
    const until = answer.claims ? Math.min(Date.now() + ACTIVE_FOR_MS, exp) : Date.now() + INACTIVE_FOR_MS;
    if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { answer, until });
    return answer;
  }

  private async ask(
    token: string,
  ): Promise<{ active: true; claims: Record<string, unknown> } | { active: false; claims?: undefined }> {
    const endpoint = (await this.issuers.metadataOf(this.settings.issuer)).introspection_endpoint;
    if (typeof endpoint !== 'string') throw new Error(`${this.settings.issuer} offers no introspection_endpoint`);
    const problem = unsafeUrl(endpoint);
    if (problem) throw new Error(`introspection_endpoint ${endpoint} ${problem}`);
    const { clientId, clientSecret } = this.settings;
    const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        authorization: `Basic ${basic}`,
      },
      body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
      redirect: 'error',
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
    if (!response.ok) throw new Error(`introspection answered HTTP ${response.status}`);
    const claims = (await response.json()) as Record<string, unknown>;
    return claims.active === true ? { active: true, claims } : { active: false };
  }

  private takeBudget(): boolean {
    const second = Math.floor(Date.now() / 1000);
    if (second !== this.budget.second) this.budget = { second, count: 0 };
    return ++this.budget.count <= INTROSPECTIONS_PER_SECOND;
  }
}

import { createHash } from 'node:crypto';
import { IntrospectionAdmission } from './introspection-admission';
import { FETCH_TIMEOUT_MS, type IssuerKeys } from './issuer-keys';
import { unsafeUrl } from './issuer-urls';

/** An inactive or unknown token is answered from the cache this long. */
const INACTIVE_FOR_MS = 10_000;
const CACHE_MAX = 10_000;

export interface IntrospectionSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** An active token is asked about again after this long at most (a revocation is heard within it). */
  activeForMs: number;
  /** Tokens not seen active one client address may have asked about per minute. */
  perSourcePerMinute: number;
}

export type Introspected =
  | { active: true; claims: Record<string, unknown> }
  | { active: false }
  /** The issuer could not be asked: down (503), over the per-second budget (503), or the source over its allowance (429). */
  | { unavailable: string; status: 429 | 503 };

/**
 * Opaque access tokens, read by asking their issuer (RFC 7662) as a
 * confidential client. Answers are kept by the token's SHA-256 (never the
 * token): an active one until it expires or for `activeForMs`, whichever is
 * sooner; an inactive one for 10 s. A token not in the cache is asked about
 * only as IntrospectionAdmission admits it (per client address, per second).
 */
export class TokenIntrospection {
  private readonly cache = new Map<string, { answer: Introspected; until: number }>();
  private readonly admission: IntrospectionAdmission;

  constructor(
    private readonly settings: IntrospectionSettings,
    private readonly issuers: IssuerKeys,
  ) {
    this.admission = new IntrospectionAdmission({ perSourcePerMinute: settings.perSourcePerMinute });
  }

  get issuer(): string {
    return this.settings.issuer;
  }

  /** What the issuer says of the token, asked for by `source` (the client's address). */
  async introspect(token: string, source: string): Promise<Introspected> {
    const key = createHash('sha256').update(token).digest('base64url');
    const cached = this.cache.get(key);
    if (cached && cached.until > Date.now()) return cached.answer;
    const admitted = this.admission.admit(key, source);
    if (!admitted.ok) return { unavailable: admitted.reason, status: admitted.status };
    let answer: { active: true; claims: Record<string, unknown> } | { active: false; claims?: undefined };
    try {
      answer = await this.ask(token);
    } catch (error) {
      admitted.settle('unanswered');
      return { unavailable: (error as Error).message, status: 503 };
    }
    const exp = answer.claims && typeof answer.claims.exp === 'number' ? answer.claims.exp * 1000 : Infinity;
    admitted.settle(answer.active ? 'active' : 'inactive', exp);
    const until = answer.claims ? Math.min(Date.now() + this.settings.activeForMs, exp) : Date.now() + INACTIVE_FOR_MS;
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
}

import { generateSigningJwk, importKeyRing, importSigningKey, publicJwk, type SigningKey } from '@mcpgw/grants';
import { SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CacheInvalidationService } from '../cache/cache-invalidation.service';
import type { GatewayEnv } from '../config/gateway.env';
import type { GrantKeysService } from './grant-keys.service';
import type { GrantRevocationsStore } from './grant-revocations.store';
import { RuntimeGrantAuthenticator } from './runtime-grant-authenticator.service';

/** A grant signed by hand, so the test chooses its id and audience as any minting host could. */
async function grantToken(signing: SigningKey, claims: { jti: string; aud?: string }): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ ws: 'ws-1', agt: 'agent-1', tsk: 'task-1', tools: ['echo'], creds: [] })
    .setProtectedHeader({ alg: 'EdDSA', kid: signing.kid, typ: 'rg+jwt' })
    .setJti(claims.jti)
    .setIssuer('mcpgw')
    .setIssuedAt(now)
    .setExpirationTime(now + 600);
  if (claims.aud !== undefined) jwt.setAudience(claims.aud);
  return jwt.sign(signing.key);
}

describe('RuntimeGrantAuthenticator', () => {
  let signing: SigningKey;
  let keys: GrantKeysService;

  beforeAll(async () => {
    const jwk = await generateSigningJwk();
    signing = await importSigningKey(jwk);
    const ring = await importKeyRing([publicJwk(jwk)]);
    keys = { configured: true, ring } as unknown as GrantKeysService;
  });

  /** An authenticator whose revocations table holds `revoked` (as `grant revoke` stores them: lower case). */
  async function authenticatorWith(revoked: string[]) {
    const store = {
      active: async () => revoked.map((id) => id.toLowerCase()),
      purgeExpired: async () => 0,
    } as unknown as GrantRevocationsStore;
    const invalidation = { on: () => undefined } as unknown as CacheInvalidationService;
    const authenticator = new RuntimeGrantAuthenticator(
      keys,
      store,
      { GRANT_MAX_TTL_SECONDS: 86_400 } as GatewayEnv,
      invalidation,
    );
    await authenticator.onApplicationBootstrap();
    authenticator.onApplicationShutdown();
    return authenticator;
  }

  const bearer = (token: string) => ['Authorization', `Bearer ${token}`];

  it('refuses a revoked grant whose id is upper case', async () => {
    const id = randomUUID().toUpperCase();
    const token = await grantToken(signing, { jti: id, aud: 'mcpgw:ws-1/agent-1' });
    expect((await (await authenticatorWith([])).authenticate(bearer(token), 'ws-1', 'agent-1')).ok).toBe(true);
    expect(await (await authenticatorWith([id])).authenticate(bearer(token), 'ws-1', 'agent-1')).toEqual({
      ok: false,
      reason: 'the grant has been revoked',
    });
  });

  it('refuses a grant for another audience, or naming none', async () => {
    const authenticator = await authenticatorWith([]);
    const withAudience = async (aud?: string) =>
      authenticator.authenticate(bearer(await grantToken(signing, { jti: randomUUID(), aud })), 'ws-1', 'agent-1');
    expect(await withAudience('https://other-service.example/api')).toEqual({
      ok: false,
      reason: "the grant's audience (aud) is not mcpgw:ws-1/agent-1",
    });
    expect(await withAudience('mcpgw:ws-1/agent-2')).toMatchObject({ ok: false });
    expect(await withAudience(undefined)).toEqual({ ok: false, reason: 'the grant names no audience (aud)' });
    expect((await withAudience('mcpgw:ws-1/agent-1')).ok).toBe(true);
  });

  it('refuses a grant whose id is not a UUID (grant revoke could never reach it)', async () => {
    const token = await grantToken(signing, { jti: 'grant-42', aud: 'mcpgw:ws-1/agent-1' });
    expect(await (await authenticatorWith([])).authenticate(bearer(token), 'ws-1', 'agent-1')).toMatchObject({
      ok: false,
      reason: 'the token lacks RuntimeGrant claims',
    });
  });
});

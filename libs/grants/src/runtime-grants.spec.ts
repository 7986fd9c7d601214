import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  generateSigningJwk,
  importKeyRing,
  importSigningKey,
  mintRuntimeGrant,
  publicJwk,
  verifyRuntimeGrant,
  type GrantRequest,
} from './runtime-grants';

const request: GrantRequest = {
  workspaceId: 'ws1',
  agentId: 'agent1',
  taskId: 'task1',
  tools: ['echo', 'tool-id-1'],
  credentials: ['crm'],
  ttlSeconds: 60,
};

/** A day, like the gateway's default GRANT_MAX_TTL_SECONDS. */
const checks = { maxAgeSeconds: 86_400 };

async function keys(kid?: string) {
  const jwk = await generateSigningJwk(kid);
  return { jwk, signing: await importSigningKey(jwk), ring: await importKeyRing([publicJwk(jwk)]) };
}

describe('RuntimeGrants', () => {
  it('mints a grant that verifies to the same claims', async () => {
    const { signing, ring } = await keys();
    const { token, grant } = await mintRuntimeGrant(request, signing);
    const verified = await verifyRuntimeGrant(token, ring, checks);
    expect(verified).toEqual({ ok: true, grant });
    expect(grant).toMatchObject({
      workspaceId: 'ws1',
      agentId: 'agent1',
      taskId: 'task1',
      tools: ['echo', 'tool-id-1'],
      credentials: ['crm'],
    });
    expect(grant.expiresAt.getTime() - grant.issuedAt.getTime()).toBe(60_000);
  });

  it('gives every grant its own id', async () => {
    const { signing } = await keys();
    const ids = new Set(
      await Promise.all([1, 2, 3].map(async () => (await mintRuntimeGrant(request, signing)).grant.id)),
    );
    expect(ids.size).toBe(3);
  });

  it('refuses an expired grant', async () => {
    const { signing, ring } = await keys();
    const { token } = await mintRuntimeGrant({ ...request, ttlSeconds: -10 }, signing);
    expect(await verifyRuntimeGrant(token, ring, checks)).toMatchObject({ ok: false, failure: 'expired' });
  });

  it('refuses a grant signed by another key with the same kid', async () => {
    const mine = await keys('same');
    const forger = await keys('same');
    const { token } = await mintRuntimeGrant(request, forger.signing);
    expect(await verifyRuntimeGrant(token, mine.ring, checks)).toMatchObject({ ok: false, failure: 'bad_signature' });
  });

  it('refuses a grant whose kid it does not know', async () => {
    const { ring } = await keys('known');
    const other = await keys('unknown');
    const { token } = await mintRuntimeGrant(request, other.signing);
    expect(await verifyRuntimeGrant(token, ring, checks)).toMatchObject({ ok: false, failure: 'unknown_key' });
  });

  it('refuses a grant whose payload was altered', async () => {
    const { signing, ring } = await keys();
    const { token } = await mintRuntimeGrant(request, signing);
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    claims.tools.push('destroy_everything');
    const forged = [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
    expect(await verifyRuntimeGrant(forged, ring, checks)).toMatchObject({ ok: false, failure: 'bad_signature' });
  });

  it.each(['', 'abc', 'a.b.c', 'pat_x'])('refuses the malformed token %j', async (token) => {
    const { ring } = await keys();
    expect(await verifyRuntimeGrant(token, ring, checks)).toMatchObject({ ok: false, failure: 'malformed' });
  });

  it('refuses a correctly signed JWT that is not a RuntimeGrant', async () => {
    const { signing, ring } = await keys();
    const token = await new SignJWT({ sub: 'someone' })
      .setProtectedHeader({ alg: 'EdDSA', kid: signing.kid })
      .setExpirationTime('1h')
      .sign(signing.key);
    expect(await verifyRuntimeGrant(token, ring, checks)).toMatchObject({ ok: false, failure: 'not_a_grant' });
  });

  /** A grant as the minting side would sign it, with the issue time given. */
  async function grantIssuedAt(signing: Awaited<ReturnType<typeof keys>>['signing'], iat: number | undefined) {
    let jwt = new SignJWT({ ws: 'ws1', agt: 'agent1', tsk: 'task1', tools: ['echo'], creds: [] })
      .setProtectedHeader({ alg: 'EdDSA', kid: signing.kid, typ: 'rg+jwt' })
      .setJti('6f1c0b1e-3d52-4f7a-9a0e-2b8c4d5e6f70')
      .setIssuer('mcpgw')
      .setAudience('mcpgw:ws1/agent1')
      .setExpirationTime(Math.floor(Date.now() / 1000) + 30 * 86_400);
    if (iat !== undefined) jwt = jwt.setIssuedAt(iat);
    return jwt.sign(signing.key);
  }

  it('refuses a grant issued in the future (beyond the clock tolerance)', async () => {
    const { signing, ring } = await keys();
    const now = Math.floor(Date.now() / 1000);
    expect(await verifyRuntimeGrant(await grantIssuedAt(signing, now + 3_600), ring, checks)).toEqual({
      ok: false,
      failure: 'not_yet_valid',
      message: 'the grant is issued in the future',
    });
    expect((await verifyRuntimeGrant(await grantIssuedAt(signing, now + 3), ring, checks)).ok).toBe(true);
  });

  it('refuses a grant older than the maximum age, whatever its expiry says', async () => {
    const { signing, ring } = await keys();
    const issued = Math.floor(Date.now() / 1000) - 2 * 86_400;
    expect(await verifyRuntimeGrant(await grantIssuedAt(signing, issued), ring, checks)).toEqual({
      ok: false,
      failure: 'expired',
      message: 'the grant is older than allowed',
    });
  });

  it('refuses a grant without an issue time', async () => {
    const { signing, ring } = await keys();
    expect(await verifyRuntimeGrant(await grantIssuedAt(signing, undefined), ring, checks)).toMatchObject({
      ok: false,
      failure: 'not_a_grant',
    });
  });

  it('accepts grants of both keys while a rotation is under way', async () => {
    const old = await keys('old');
    const next = await keys('new');
    const ring = await importKeyRing([publicJwk(old.jwk), publicJwk(next.jwk)]);
    for (const signing of [old.signing, next.signing]) {
      const { token } = await mintRuntimeGrant(request, signing);
      expect((await verifyRuntimeGrant(token, ring, checks)).ok).toBe(true);
    }
  });

  it('keeps private members out of a public key', async () => {
    const { jwk } = await keys();
    expect(jwk.d).toBeDefined();
    expect(publicJwk(jwk).d).toBeUndefined();
  });
});

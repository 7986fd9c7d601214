import { generateSigningJwk, mintRuntimeGrant, importSigningKey, publicJwk, verifyRuntimeGrant } from '@mcpgw/grants';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { GatewayEnv } from '../config/gateway.env';
import { GrantKeysService } from './grant-keys.service';

/** A serving gateway holds verification keys only; the private key is read for minting, and only then. */
describe('GrantKeysService', () => {
  const dir = mkdtempSync(join(tmpdir(), 'grant-keys-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const serviceWith = async (env: Partial<GatewayEnv>) => {
    const service = new GrantKeysService({
      GRANT_VERIFICATION_KEYS: '',
      GRANT_SIGNING_KEY_FILE: '',
      ...env,
    } as GatewayEnv);
    await service.onModuleInit();
    return service;
  };
  const grantSignedBy = async (jwk: Awaited<ReturnType<typeof generateSigningJwk>>) =>
    (
      await mintRuntimeGrant(
        { workspaceId: 'ws', agentId: 'a', taskId: 't', tools: ['echo'], ttlSeconds: 60 },
        await importSigningKey(jwk),
      )
    ).token;

  it('with GRANT_VERIFICATION_KEYS, verifies by kid and never reads the signing key file', async () => {
    const jwk = await generateSigningJwk();
    const keyFile = join(dir, 'unreadable.json');
    writeFileSync(keyFile, 'not json: reading it would throw');
    const service = await serviceWith({
      GRANT_VERIFICATION_KEYS: JSON.stringify([publicJwk(jwk)]),
      GRANT_SIGNING_KEY_FILE: keyFile,
    });
    expect([...service.ring.keys()]).toEqual([jwk.kid]);
    const verified = await verifyRuntimeGrant(await grantSignedBy(jwk), service.ring, { maxAgeSeconds: 3_600 });
    expect(verified.ok).toBe(true);
  });

  it('with only the key file, keeps its public half: no private member in what it holds', async () => {
    const jwk = await generateSigningJwk();
    const keyFile = join(dir, 'signing.json');
    writeFileSync(keyFile, JSON.stringify(jwk));
    const service = await serviceWith({ GRANT_SIGNING_KEY_FILE: keyFile });
    const held = service.ring.get(jwk.kid!) as { type?: string };
    expect(held.type).toBe('public');
    // Minting reads the file when asked, and then signs grants the ring verifies.
    const signing = await service.signing();
    expect(signing.kid).toBe(jwk.kid);
  });

  it('without keys, is unconfigured (the grant surface answers 503), and minting names what to set', async () => {
    const service = await serviceWith({ GRANT_SIGNING_KEY_FILE: join(dir, 'missing.json') });
    expect(service.configured).toBe(false);
    await expect(service.signing()).rejects.toThrow(/GRANT_SIGNING_KEY_FILE/);
  });
});

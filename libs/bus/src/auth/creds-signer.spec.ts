import { fromPublic, fromSeed } from '@nats-io/nkeys';
import { describe, expect, it } from 'vitest';
import { createAuthority, issueCredentials } from './authority';
import { credsSigner } from './creds-signer';

describe('credsSigner', () => {
  it("signs the nonce as nats.js's nkeys would, byte for byte, for the user the JWT names", async () => {
    const authority = await createAuthority('signer');
    const issued = await issueCredentials({
      account: authority.account,
      signingSeed: authority.accountSigningSeed,
      prefix: 'mcpgw',
      identity: { role: 'agent', agentId: 'a1' },
    });
    const seed = /-----BEGIN USER NKEY SEED-----\s*(\S+)/.exec(issued.creds)![1];
    const jwt = /-----BEGIN NATS USER JWT-----\s*(\S+)/.exec(issued.creds)![1];
    const nonce = 'c2c7Ylwz0rD6RXk';

    const auth = credsSigner(issued.creds)(nonce) as { jwt: string; nkey: string; sig: string };
    expect(auth.jwt).toBe(jwt);
    expect(auth.nkey).toBe(issued.user);
    // Ed25519 is deterministic: the same signature as the JavaScript implementation's.
    const expected = Buffer.from(fromSeed(new TextEncoder().encode(seed)).sign(Buffer.from(nonce))).toString('base64');
    expect(auth.sig).toBe(expected);
    expect(fromPublic(issued.user).verify(Buffer.from(nonce), Buffer.from(auth.sig, 'base64'))).toBe(true);
  });

  it('refuses a file that is not credentials, or a seed whose checksum is wrong', async () => {
    expect(() => credsSigner('hello')).toThrow(/not a NATS credentials file/);
    const authority = await createAuthority('signer');
    const { creds } = await issueCredentials({
      account: authority.account,
      signingSeed: authority.accountSigningSeed,
      prefix: 'mcpgw',
      identity: { role: 'gateway' },
    });
    const broken = creds.replace(
      /(-----BEGIN USER NKEY SEED-----\s*S\w)(\w)/,
      (_, head: string, c: string) => head + (c === 'A' ? 'B' : 'A'),
    );
    expect(() => credsSigner(broken)).toThrow(/bad nkey seed/);
  });
});

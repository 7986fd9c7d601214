import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { nkeys, type Authenticator } from 'nats';
import { credsClaims } from './creds-file';

/** The DER header of an Ed25519 private key in PKCS #8, before its 32-byte seed (RFC 8410). */
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * A creds-file authenticator that signs the server's nonce with Node's own
 * Ed25519 (OpenSSL), once the key is read: what nats.js's `credsAuthenticator`
 * does with a pure-JavaScript Ed25519 that re-derives the key pair on every
 * connect (about 10 ms of CPU each on this project's CI machine, 100 times
 * this). A process hosting many agents connects them all at once; with the
 * JavaScript signer a few hundred handshakes queued behind each other long
 * enough for the server's auth timeout to close them (issue 26, `npm run
 * bench:agents`). Same wire result: the user JWT, its public key, and the
 * nonce's signature in base64.
 */
export function credsSigner(creds: string): Authenticator {
  const jwt = section(creds, 'NATS USER JWT');
  const key = privateKeyOf(section(creds, 'USER NKEY SEED'));
  const nkey = credsClaims(creds).sub ?? '';
  return (nonce?: string) => ({
    jwt,
    nkey,
    sig: nonce ? sign(null, Buffer.from(nonce, 'utf8'), key).toString('base64') : '',
  });
}

function section(creds: string, name: string): string {
  const match = new RegExp(`-----BEGIN ${name}-----\\s*([^\\s-][^\\s]*)\\s*-`).exec(creds);
  if (!match) throw new Error('not a NATS credentials file');
  return match[1];
}

/** An nkey seed (`S…`) as an Ed25519 key: nats.js's nkeys decodes and checks it (no key derivation: that is the slow part). */
function privateKeyOf(seed: string): KeyObject {
  let raw: Uint8Array;
  try {
    raw = nkeys.fromSeed(new TextEncoder().encode(seed)).getRawSeed();
  } catch {
    throw new Error('not a NATS credentials file (bad nkey seed)');
  }
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, raw]), format: 'der', type: 'pkcs8' });
}

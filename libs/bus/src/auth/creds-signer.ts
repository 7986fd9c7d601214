import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import type { Authenticator } from 'nats';
import { credsClaims } from './creds-file';

/** The DER header of an Ed25519 private key in PKCS #8, before its 32-byte seed (RFC 8410). */
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

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

/** An nkey seed (`S…`: base32 of two prefix bytes, the 32-byte seed and a CRC-16) as an Ed25519 key. */
function privateKeyOf(seed: string): KeyObject {
  const bytes = base32(seed);
  if (bytes.length !== 36 || crc16(bytes.subarray(0, 34)) !== bytes.readUInt16LE(34)) {
    throw new Error('not a NATS credentials file (bad nkey seed)');
  }
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, bytes.subarray(2, 34)]), format: 'der', type: 'pkcs8' });
}

function base32(text: string): Buffer {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of text) {
    const index = BASE32.indexOf(char);
    if (index < 0) throw new Error('not a NATS credentials file (bad nkey seed)');
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** CRC-16/XMODEM, as nkeys checks a key's encoding. */
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

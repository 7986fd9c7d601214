import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { SecretBox, newSecret, signatureHeader } from './webhook-secrets';

const box = SecretBox.fromEnv({
  WEBHOOK_SECRET_KEY: 'a-unit-test-key-of-at-least-32-characters',
  WEBHOOK_SECRET_KEY_FILE: '',
});

describe('webhook secrets', () => {
  it('are whsec_ and the base64 of 32 random bytes', () => {
    const secret = newSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newSecret()).not.toBe(secret);
  });

  it('sign as Standard Webhooks: the standardwebhooks package verifies, and refuses a changed body', () => {
    const secret = newSecret();
    const body = JSON.stringify({ type: 'tool_call.completed', timestamp: new Date().toISOString(), data: {} });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader([secret], 'msg_1', timestamp, body),
    };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(headers['webhook-signature']).toBe(new Webhook(secret).sign('msg_1', new Date(timestamp * 1000), body));
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
  });

  it('send one signature per secret during a rotation, each verifying', () => {
    const [old, current] = [newSecret(), newSecret()];
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signatureHeader([current, old], 'msg_2', timestamp, '{}');
    expect(signature.split(' ')).toHaveLength(2);
    const headers = { 'webhook-id': 'msg_2', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
    expect(() => new Webhook(old).verify('{}', headers)).not.toThrow();
    expect(() => new Webhook(current).verify('{}', headers)).not.toThrow();
  });

  it('are stored sealed: no trace of the secret, and only for the webhook and key that sealed them', () => {
    const secret = newSecret();
    const sealed = box.seal('wh_1', secret);
    expect(sealed.includes(Buffer.from(secret))).toBe(false);
    expect(sealed.includes(Buffer.from(secret.slice(6), 'base64'))).toBe(false);
    expect(box.open('wh_1', sealed)).toBe(secret);
    expect(() => box.open('wh_2', sealed)).toThrow(/does not open/);
    const other = SecretBox.fromEnv({
      WEBHOOK_SECRET_KEY: 'another-key-of-at-least-32-characters!!',
      WEBHOOK_SECRET_KEY_FILE: '',
    });
    expect(() => other.open('wh_1', sealed)).toThrow(/does not open/);
    const tampered = Buffer.from(sealed);
    tampered[20] ^= 1;
    expect(() => box.open('wh_1', tampered)).toThrow(/does not open/);
  });

  describe('across a change of WEBHOOK_SECRET_KEY', () => {
    const OLD_KEY = 'an-old-unit-test-key-of-32-characters-or-more';
    const NEW_KEY = 'the-new-unit-test-key-of-32-characters-or-more';
    const old = SecretBox.fromEnv({ WEBHOOK_SECRET_KEY: OLD_KEY, WEBHOOK_SECRET_KEY_FILE: '' });
    const rotated = SecretBox.fromEnv({
      WEBHOOK_SECRET_KEY: NEW_KEY,
      WEBHOOK_SECRET_PREVIOUS_KEYS: `some-other-retired-key-of-32-characters,${OLD_KEY}`,
      WEBHOOK_SECRET_KEY_FILE: '',
    });
    const alone = SecretBox.fromEnv({ WEBHOOK_SECRET_KEY: NEW_KEY, WEBHOOK_SECRET_KEY_FILE: '' });

    it('a previous key opens what it sealed; new secrets are sealed with the current key only', () => {
      const secret = newSecret();
      const sealedBefore = old.seal('wh_1', secret);
      expect(rotated.open('wh_1', sealedBefore)).toBe(secret);
      expect(rotated.isCurrent(sealedBefore)).toBe(false);
      expect(() => alone.open('wh_1', sealedBefore)).toThrow(/does not open with this WEBHOOK_SECRET_KEY$/);

      const sealedAfter = rotated.seal('wh_1', secret);
      expect(rotated.isCurrent(sealedAfter)).toBe(true);
      expect(alone.open('wh_1', sealedAfter)).toBe(secret);
      expect(() => old.open('wh_1', sealedAfter)).toThrow(/does not open with this WEBHOOK_SECRET_KEY/);
      // The key id names the key: an altered ciphertext is told apart from a missing key.
      const tampered = Buffer.from(sealedAfter);
      tampered[tampered.length - 1] ^= 1;
      expect(() => alone.open('wh_1', tampered)).toThrow(/does not open: it was altered/);
      expect(() => alone.open('wh_2', sealedAfter)).toThrow(/does not open: it was altered/);
    });

    it('secrets sealed before ciphertexts named their key (format 1) still open, with the current or a previous key', () => {
      // Sealed by the code before key ids, with OLD_KEY, for webhook wh_v1.
      const v1 = Buffer.from(
        'ActGoqic9qYJywKAj6Y4lGDOKomMmmtn9pz+isJP1xhCRNCiI+ogFU7T7LrBCGRMDgDeFjj8935RC7EAIDKV7RHiN7Y1k0Zw0sWXxSCgq+EbdE3acMy1',
        'base64',
      );
      const secret = 'whsec_c2VhbGVkIGJlZm9yZSBrZXkgaWRzLCBieSB0aGUgdjEgY29kZQ==';
      expect(old.open('wh_v1', v1)).toBe(secret);
      expect(rotated.open('wh_v1', v1)).toBe(secret);
      expect(rotated.isCurrent(v1)).toBe(false);
      expect(() => alone.open('wh_v1', v1)).toThrow(/does not open with this WEBHOOK_SECRET_KEY$/);
      expect(() => rotated.open('wh_other', v1)).toThrow(
        /does not open with this WEBHOOK_SECRET_KEY nor WEBHOOK_SECRET_PREVIOUS_KEYS/,
      );
    });
  });
});

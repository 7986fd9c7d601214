import { describe, expect, it } from 'vitest';
import { loadEnv } from '../config/gateway.env';
import { ConversationHandles } from './conversation-handles';

const SECRET = 'a'.repeat(32);
const OLD_SECRET = 'b'.repeat(32);
const handles = (env: Record<string, string>) =>
  new ConversationHandles(loadEnv({ CONVERSATION_HANDLE_TTL_SECONDS: '3600', ...env }));

describe('ConversationHandles', () => {
  const now = Date.UTC(2026, 10, 30, 12);

  it('gives back the channel for the same agent and caller, and nothing for another', () => {
    const h = handles({ CONVERSATION_HANDLE_SECRET: SECRET });
    const handle = h.mint('chan-1', 'agent', 'apikey:k1', now);
    expect(h.channelOf(handle, 'agent', 'apikey:k1', now)).toBe('chan-1');
    expect(h.channelOf(handle, 'agent', 'apikey:k2', now)).toBeUndefined();
    expect(h.channelOf(handle, 'other-agent', 'apikey:k1', now)).toBeUndefined();
  });

  it('refuses a tampered or expired handle', () => {
    const h = handles({ CONVERSATION_HANDLE_SECRET: SECRET });
    const handle = h.mint('chan-1', 'agent', 'apikey:k1', now);
    const [kid, payload, signature] = handle.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const otherChannel = Buffer.from(JSON.stringify({ ...claims, c: 'chan-2' })).toString('base64url');
    expect(h.channelOf(`${kid}.${otherChannel}.${signature}`, 'agent', 'apikey:k1', now)).toBeUndefined();
    expect(h.channelOf(handle, 'agent', 'apikey:k1', now + 3_601_000)).toBeUndefined();
  });

  it('verifies handles of a previous secret during a rotation, and no longer once it is dropped', () => {
    const before = handles({ CONVERSATION_HANDLE_SECRET: OLD_SECRET }).mint('chan-1', 'agent', 'apikey:k1', now);
    const rotating = handles({ CONVERSATION_HANDLE_SECRET: SECRET, CONVERSATION_HANDLE_PREVIOUS_SECRETS: OLD_SECRET });
    expect(rotating.channelOf(before, 'agent', 'apikey:k1', now)).toBe('chan-1');
    expect(
      handles({ CONVERSATION_HANDLE_SECRET: SECRET }).channelOf(before, 'agent', 'apikey:k1', now),
    ).toBeUndefined();
  });

  it('keeps a handle while it has more than half its life, then renews it under the current key', () => {
    const h = handles({ CONVERSATION_HANDLE_SECRET: SECRET, CONVERSATION_HANDLE_PREVIOUS_SECRETS: OLD_SECRET });
    const handle = h.mint('chan-1', 'agent', 'apikey:k1', now);
    expect(h.renew(handle, 'chan-1', 'agent', 'apikey:k1', now + 60_000)).toBe(handle);
    const renewed = h.renew(handle, 'chan-1', 'agent', 'apikey:k1', now + 1_900_000);
    expect(renewed).not.toBe(handle);
    expect(h.channelOf(renewed, 'agent', 'apikey:k1', now + 3_601_000)).toBe('chan-1');
  });

  it('refuses to start in production without a secret, naming the variable', () => {
    expect(() => loadEnv({ NODE_ENV: 'production' })).toThrow(/CONVERSATION_HANDLE_SECRET must be set/);
    // What else production asks for (webhook and file URL keys, NATS credentials) given, so only this one is tested.
    const others = {
      WEBHOOK_SECRET_KEY: OLD_SECRET,
      FILES_URL_SIGNING_KEYS: `k1:${OLD_SECRET}`,
      NATS_CREDS: '/auth/gateway.creds',
    };
    expect(() => loadEnv({ NODE_ENV: 'production', ...others })).toThrow(/CONVERSATION_HANDLE_SECRET must be set/);
    expect(() => loadEnv({ NODE_ENV: 'production', ...others, CONVERSATION_HANDLE_SECRET: SECRET })).not.toThrow();
  });
});

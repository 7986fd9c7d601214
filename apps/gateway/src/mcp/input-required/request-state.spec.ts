import { describe, expect, it } from 'vitest';
import type { GatewayEnv } from '../../config/gateway.env';
import { RequestStates, requestDigest, type RequestState } from './request-state';

const env = (secret: string, previous = '') =>
  ({ CONVERSATION_HANDLE_SECRET: secret, CONVERSATION_HANDLE_PREVIOUS_SECRETS: previous }) as GatewayEnv;
const SECRET = 'a-unit-test-secret-of-at-least-32-characters';
const binding = {
  principal: 'apikey:k1',
  agentId: 'demo-agent',
  method: 'tools/call',
  digest: requestDigest('tools/call', { name: 't', arguments: { a: 1, b: [2] } }),
};
const state = (expiresAt = Date.now() + 60_000): RequestState => ({
  ...binding,
  messageId: '11111111-1111-4111-8111-111111111111',
  channelId: '22222222-2222-4222-8222-222222222222',
  open: { user_name: { method: 'elicitation/create', params: { message: 'Name?' } } },
  callEndsAt: Date.now() + 600_000,
  expiresAt,
});

describe('RequestStates', () => {
  const states = new RequestStates(env(SECRET));

  it('opens what it sealed, on any replica sharing the secret, and leaks nothing in clear', () => {
    const sealed = states.seal(state());
    expect(sealed).not.toContain('Name?');
    expect(Buffer.from(sealed.split('.')[1], 'base64url').toString('latin1')).not.toContain('demo-agent');
    const opened = new RequestStates(env(SECRET)).open(sealed, binding);
    expect(opened).toMatchObject({ ok: true, state: { ...binding, open: state().open, messageId: state().messageId } });
  });

  it('refuses a state changed in any way, or sealed under another secret', () => {
    const sealed = states.seal(state());
    const flipped = `${sealed.slice(0, -3)}${sealed.at(-3) === 'A' ? 'B' : 'A'}${sealed.slice(-2)}`;
    for (const bad of [`${sealed}-TAMPERED`, flipped, sealed.replace(/^s/, 't'), '', 42, null, 'x.y.z']) {
      expect(states.open(bad, binding).ok).toBe(false);
    }
    expect(new RequestStates(env('another-secret-of-at-least-32-characters!!')).open(sealed, binding).ok).toBe(false);
  });

  it('refuses another principal, agent or request, and an expired state', () => {
    const sealed = states.seal(state());
    expect(states.open(sealed, { ...binding, principal: 'apikey:k2' })).toMatchObject({ ok: false });
    expect(states.open(sealed, { ...binding, agentId: 'other' })).toMatchObject({ ok: false });
    expect(states.open(sealed, { ...binding, method: 'prompts/get' })).toMatchObject({ ok: false });
    const otherArgs = requestDigest('tools/call', { name: 't', arguments: { a: 2, b: [2] } });
    expect(states.open(sealed, { ...binding, digest: otherArgs })).toMatchObject({ ok: false });
    expect(states.open(states.seal(state(Date.now() - 1)), binding)).toEqual({
      ok: false,
      reason: 'requestState has expired',
    });
  });

  it('still opens states sealed under a previous secret after a rotation', () => {
    const sealed = states.seal(state());
    expect(new RequestStates(env('the-next-secret-of-at-least-32-characters!', SECRET)).open(sealed, binding).ok).toBe(
      true,
    );
  });

  it('digests the request regardless of key order', () => {
    expect(requestDigest('tools/call', { name: 't', arguments: { b: [2], a: 1 } })).toBe(binding.digest);
  });
});

import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../webhooks/webhook-secrets';
import { openPushHeaders, readPushHeaders, sealPushHeaders } from '../../webhooks/push-headers';
import { parsePushConfig, wireConfig } from './push-config-shapes';

const box = SecretBox.fromEnv({
  WEBHOOK_SECRET_KEY: 'push-config-shapes-spec-key-0123456789',
  WEBHOOK_SECRET_KEY_FILE: '',
});

describe('A2A push configs: what a client may send', () => {
  it('reads url, id, token and authentication into the headers a delivery carries', () => {
    const parsed = parsePushConfig(
      {
        id: 'cfg-1',
        url: 'https://example.com/h',
        token: 't-1',
        authentication: { scheme: 'Bearer', credentials: 'c-1' },
      },
      'call_1',
    );
    expect(parsed).toEqual({
      ok: true,
      config: {
        taskId: 'call_1',
        configId: 'cfg-1',
        url: 'https://example.com/h',
        headers: { token: 't-1', authorization: 'Bearer c-1' },
      },
    });
  });

  it('an absent id is the default given (a new UUID unless told)', () => {
    const mint = parsePushConfig({ url: 'https://example.com/h' }, 'call_1');
    expect(mint.ok && mint.config.configId).toMatch(/^[0-9a-f-]{36}$/);
    const task = parsePushConfig({ url: 'https://example.com/h', id: '' }, 'call_1', 'call_1');
    expect(task.ok && task.config.configId).toBe('call_1');
  });

  it('refuses, never throws, anything that would not make a clean header or a config', () => {
    const refused = [
      null,
      'https://example.com',
      {},
      { url: 5 },
      { url: 'https://x', token: 'a\r\nx-injected: 1' },
      { url: 'https://x', token: 'caf\u00e9' },
      { url: 'https://x', authentication: { scheme: 'Bearer x', credentials: 'c' } },
      { url: 'https://x', authentication: { scheme: 'Bearer', credentials: 'c\nx' } },
      { url: 'https://x', authentication: 'Bearer c' },
      { url: 'https://x', id: 'a b' },
      { url: 'https://x', id: 'x'.repeat(256) },
    ];
    for (const value of refused) expect(parsePushConfig(value, 'call_1').ok).toBe(false);
  });

  it('reads back the scheme only: credentials and token are write-only', () => {
    const wire = wireConfig('call_1', {
      webhookId: 'a2p_1',
      configId: 'cfg-1',
      url: 'https://example.com/h',
      scheme: 'Bearer',
      hasToken: true,
    });
    expect(wire).toEqual({
      id: 'cfg-1',
      taskId: 'call_1',
      url: 'https://example.com/h',
      authentication: { scheme: 'Bearer' },
    });
  });
});

describe('A2A push headers at rest', () => {
  it('are sealed (no plain text), open for their row only, and make Authorization and X-A2A-Notification-Token', () => {
    const sealed = sealPushHeaders(box, 'a2p_1', { authorization: 'Bearer c-1', token: 't-1' });
    expect(sealed.toString('latin1')).not.toMatch(/c-1|t-1/);
    expect(openPushHeaders(box, 'a2p_1', sealed)).toEqual({
      authorization: 'Bearer c-1',
      'x-a2a-notification-token': 't-1',
    });
    expect(() => readPushHeaders(box, 'a2p_2', sealed)).toThrow();
    // The row's signing secret (sealed under the bare id) does not open as its headers, nor the reverse.
    expect(() => box.open('a2p_1', sealed)).toThrow();
  });
});

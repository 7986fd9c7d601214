import { describe, expect, it } from 'vitest';
import { loadEnv } from './message-service.env';

const PLACEHOLDER = 'replace-me-with-32-or-more-random-characters';

function problemsOf(env: Record<string, string>): string {
  try {
    loadEnv(env);
    return '';
  } catch (error) {
    return (error as Error).message;
  }
}

describe('the message service in production', () => {
  it('refuses a placeholder MESSAGE_SERVICE_TOKEN, naming it and never its value', () => {
    const message = problemsOf({
      NODE_ENV: 'production',
      NATS_CREDS: '/auth/message-service.creds',
      MESSAGE_SERVICE_TOKEN: PLACEHOLDER,
    });
    expect(message).toContain('MESSAGE_SERVICE_TOKEN=<hidden>: MESSAGE_SERVICE_TOKEN holds a placeholder');
    expect(message).not.toContain(PLACEHOLDER);
    expect(problemsOf({ MESSAGE_SERVICE_TOKEN: PLACEHOLDER })).toBe('');
  });

  it('refuses to connect to NATS without credentials unless told to', () => {
    expect(problemsOf({ NODE_ENV: 'production' })).toMatch(/NATS_CREDS=.*must name a credentials file/);
    expect(problemsOf({ NODE_ENV: 'production', NATS_ALLOW_ANONYMOUS: 'true' })).toBe('');
    expect(problemsOf({ NODE_ENV: 'production', NATS_CREDS: '/auth/message-service.creds' })).toBe('');
  });
});

describe('INBOX_REPLICAS', () => {
  it('is 1 unless set, and 1 to 5 (JetStream keeps at most 5 copies)', () => {
    expect(loadEnv({}).INBOX_REPLICAS).toBe(1);
    expect(loadEnv({ INBOX_REPLICAS: '3' }).INBOX_REPLICAS).toBe(3);
    expect(problemsOf({ INBOX_REPLICAS: '0' })).toMatch(/INBOX_REPLICAS/);
    expect(problemsOf({ INBOX_REPLICAS: '6' })).toMatch(/INBOX_REPLICAS/);
  });
});

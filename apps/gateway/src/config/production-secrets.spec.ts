import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { signingKeys } from '../files/files.service';
import { loadEnv } from './gateway.env';

/** The variables .env.example gives, with its placeholder values. */
function envExample(): Record<string, string> {
  const text = readFileSync(resolve(__dirname, '../../../../.env.example'), 'utf8');
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => /^[A-Z0-9_]+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

const REAL = (n: number) => `Zr8${n}q1Lx0pV7mK2tW9cN4bH6jD3sF5gY`;
const base = { NODE_ENV: 'production', NATS_CREDS: '/auth/gateway.creds' };

function problemsOf(env: Record<string, string>): string {
  try {
    loadEnv(env);
    return '';
  } catch (error) {
    return (error as Error).message;
  }
}

describe("the gateway in production, with .env.example's placeholders", () => {
  const example = envExample();

  it('refuses every placeholder secret, naming each variable and never a value', () => {
    const message = problemsOf({ ...base, ...example, FILES_S3_SECRET_ACCESS_KEY: example.MINIO_ROOT_PASSWORD });
    for (const name of [
      'CONVERSATION_HANDLE_SECRET',
      'WEBHOOK_SECRET_KEY',
      'FILES_URL_SIGNING_KEYS',
      'FILES_S3_SECRET_ACCESS_KEY',
    ]) {
      expect(message).toContain(`${name}=<hidden>: ${name} holds a placeholder`);
    }
    expect(message).not.toMatch(/replace-me/);
    expect(
      problemsOf({
        ...base,
        CONVERSATION_HANDLE_SECRET: REAL(1),
        CONVERSATION_HANDLE_PREVIOUS_SECRETS: `${REAL(2)},${example.CONVERSATION_HANDLE_SECRET}`,
        WEBHOOK_SECRET_KEY: REAL(3),
        WEBHOOK_SECRET_PREVIOUS_KEYS: example.WEBHOOK_SECRET_KEY,
        FILES_URL_SIGNING_KEYS: `k1:${REAL(4)}`,
      }),
    ).toMatch(/CONVERSATION_HANDLE_PREVIOUS_SECRETS=<hidden>: .*placeholder[^]*WEBHOOK_SECRET_PREVIOUS_KEYS=<hidden>/);
  });

  it('starts once they are replaced, and runs with them outside production', () => {
    const replaced = {
      CONVERSATION_HANDLE_SECRET: REAL(1),
      WEBHOOK_SECRET_KEY: REAL(2),
      FILES_URL_SIGNING_KEYS: `k1:${REAL(3)}`,
      FILES_S3_SECRET_ACCESS_KEY: REAL(4),
    };
    expect(problemsOf({ ...base, ...example, ...replaced })).toBe('');
    expect(problemsOf({ ...example, NODE_ENV: 'development' })).toBe('');
  });

  it('refuses a placeholder in a FILES_URL_SIGNING_KEYS file too', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'signing-keys-')), 'keys');
    writeFileSync(file, `${envExample().FILES_URL_SIGNING_KEYS}\n`);
    expect(() => signingKeys({ NODE_ENV: 'production', FILES_URL_SIGNING_KEYS: file })).toThrow(
      /FILES_URL_SIGNING_KEYS holds a placeholder/,
    );
    expect(signingKeys({ NODE_ENV: 'development', FILES_URL_SIGNING_KEYS: file })).toHaveLength(1);
    writeFileSync(file, `k1:${REAL(5)}\n`);
    expect(signingKeys({ NODE_ENV: 'production', FILES_URL_SIGNING_KEYS: file })).toHaveLength(1);
  });
});

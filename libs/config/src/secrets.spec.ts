import { IsString } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { DeploymentEnv, NatsEnv } from './env-classes';
import { isPlaceholderSecret, NoPlaceholderInProduction } from './secrets';
import { validateEnv } from './validate-env';

class SecretEnv {
  @IsString()
  @NoPlaceholderInProduction()
  SOME_SECRET: string = '';
}

const PLACEHOLDER = 'replace-me-with-32-or-more-random-characters';
const REAL = 'q3Jx9vR2mZ8kT1wY5nB7cL4dF6gH0sA2';
const problemsOf = (env: Record<string, string>, ...classes: (new () => object)[]): string => {
  try {
    validateEnv(env, ...classes);
    return '';
  } catch (error) {
    return (error as Error).message;
  }
};

describe('placeholder secrets', () => {
  it('knows the placeholders the repository ships', () => {
    for (const value of [
      PLACEHOLDER,
      'replace-me-with-32-or-more-random-characters-too',
      'k1:replace-me-with-32-or-more-random-characters',
      'REPLACE_ME_WITH_32_OR_MORE_RANDOM_CHARACTERS',
      'dev-only-webhook-secret-key-not-for-production',
      'please-change-me-0123456789abcdefghij',
    ]) {
      expect(isPlaceholderSecret(value), value).toBe(true);
    }
    expect(isPlaceholderSecret(REAL)).toBe(false);
  });

  it('are refused in production, naming the variable and never its value', () => {
    const message = problemsOf({ NODE_ENV: 'production', SOME_SECRET: PLACEHOLDER }, DeploymentEnv, SecretEnv);
    expect(message).toContain('SOME_SECRET=<hidden>: SOME_SECRET holds a placeholder');
    expect(message).not.toContain(PLACEHOLDER);
  });

  it('still run outside production, and real secrets run in production', () => {
    expect(problemsOf({ SOME_SECRET: PLACEHOLDER }, DeploymentEnv, SecretEnv)).toBe('');
    expect(problemsOf({ NODE_ENV: 'production', SOME_SECRET: REAL }, DeploymentEnv, SecretEnv)).toBe('');
  });
});

describe('NATS credentials in production', () => {
  it('are required, naming the variable and the way out', () => {
    expect(problemsOf({ NODE_ENV: 'production' }, DeploymentEnv, NatsEnv)).toMatch(
      /NATS_CREDS=.*must name a credentials file when NODE_ENV=production \(set NATS_ALLOW_ANONYMOUS=true/,
    );
    expect(problemsOf({ NODE_ENV: 'production', NATS_ALLOW_ANONYMOUS: 'false' }, DeploymentEnv, NatsEnv)).toMatch(
      /NATS_CREDS/,
    );
  });

  it('may be left out on purpose with NATS_ALLOW_ANONYMOUS=true, and outside production', () => {
    expect(problemsOf({ NODE_ENV: 'production', NATS_CREDS: '/auth/gateway.creds' }, DeploymentEnv, NatsEnv)).toBe('');
    expect(problemsOf({ NODE_ENV: 'production', NATS_ALLOW_ANONYMOUS: 'true' }, DeploymentEnv, NatsEnv)).toBe('');
    expect(problemsOf({}, DeploymentEnv, NatsEnv)).toBe('');
  });

  it('takes only true or false for NATS_ALLOW_ANONYMOUS', () => {
    expect(problemsOf({ NATS_ALLOW_ANONYMOUS: 'yes' }, NatsEnv)).toMatch(/NATS_ALLOW_ANONYMOUS="yes"/);
  });
});

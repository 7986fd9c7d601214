import { IsInt, Matches, Min } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { DatabaseEnv, NatsEnv } from './env-classes';
import { EnvValidationError, validateEnv } from './validate-env';

class AppEnv {
  @IsInt()
  @Min(1)
  PORT: number = 3000;

  @Matches(/^s_/)
  API_SECRET: string = 's_default';
}

describe('validateEnv', () => {
  it('fills defaults and converts numbers', () => {
    expect(validateEnv({ PORT: '8080' }, NatsEnv, AppEnv)).toMatchObject({
      PORT: 8080,
      NATS_URL: 'nats://127.0.0.1:4222',
      BUS_PREFIX: 'mcpgw',
    });
  });

  it('names every bad variable and hides secrets', () => {
    let error: unknown;
    try {
      validateEnv({ PORT: 'zero', NATS_URL: 'http://x', API_SECRET: 'leaked-value' }, NatsEnv, AppEnv);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EnvValidationError);
    const message = (error as Error).message;
    expect(message).toContain('PORT="zero"');
    expect(message).toContain('NATS_URL');
    expect(message).toContain('API_SECRET=<hidden>');
    expect(message).not.toContain('leaked-value');
  });

  it('treats empty variables as unset', () => {
    expect(validateEnv({ PORT: '' }, AppEnv).PORT).toBe(3000);
  });

  it('never prints the password of a database URL', () => {
    let message = '';
    try {
      validateEnv({ DATABASE_URL: 'mysql://admin:s3cret@db:3306/x' }, DatabaseEnv);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('admin:***@db');
    expect(message).not.toContain('s3cret');
  });
});

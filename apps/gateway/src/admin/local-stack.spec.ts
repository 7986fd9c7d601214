import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { npmStartDefaults } from './local-stack';

describe('npmStartDefaults: the admin CLI finds the stack npm start runs', () => {
  const stackEnv = {
    DATABASE_URL: 'postgres://postgres@127.0.0.1:54329/mcpgw',
    NATS_URL: 'nats://127.0.0.1:40001',
    BUS_PREFIX: 'mcpgw',
    NATS_ACCOUNT_PUBLIC_KEY: 'A'.repeat(56),
    NATS_ACCOUNT_SIGNING_SEED_FILE: '/tmp/mcpgw-nats-x/account-signing.seed',
    SOMETHING_ELSE: 'not taken',
  };
  const root = (content: unknown = { pid: 4242, env: stackEnv }, name = '.data/npm-start.json') => {
    const dir = mkdtempSync(join(tmpdir(), 'npm-start-file-'));
    mkdirSync(join(dir, '.data'));
    writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
    return dir;
  };
  const alive = (pid: number) => pid === 4242;

  it('fills the settings the environment leaves unset (and only the listed ones)', () => {
    const dir = root();
    const found = npmStartDefaults({ BUS_PREFIX: 'mine', NATS_URL: '' }, dir, alive);
    expect(found?.file).toBe(join(dir, '.data/npm-start.json'));
    expect(found?.settings).toEqual({
      DATABASE_URL: stackEnv.DATABASE_URL,
      NATS_URL: stackEnv.NATS_URL,
      NATS_ACCOUNT_PUBLIC_KEY: stackEnv.NATS_ACCOUNT_PUBLIC_KEY,
      NATS_ACCOUNT_SIGNING_SEED_FILE: stackEnv.NATS_ACCOUNT_SIGNING_SEED_FILE,
    });
  });

  it('takes the same database named in the environment too', () => {
    expect(npmStartDefaults({ DATABASE_URL: stackEnv.DATABASE_URL }, root(), alive)?.settings.NATS_URL).toBe(
      stackEnv.NATS_URL,
    );
  });

  it('never with NODE_ENV=production, for another database, or when that npm start is gone', () => {
    const dir = root();
    expect(npmStartDefaults({ NODE_ENV: 'production' }, dir, alive)).toBeUndefined();
    expect(npmStartDefaults({ DATABASE_URL: 'postgres://db.internal/mcpgw' }, dir, alive)).toBeUndefined();
    expect(npmStartDefaults({}, root({ pid: 1111, env: stackEnv }), alive)).toBeUndefined();
  });

  it('without a file, or with one that is not npm start’s, nothing', () => {
    expect(npmStartDefaults({}, mkdtempSync(join(tmpdir(), 'npm-start-none-')), alive)).toBeUndefined();
    expect(npmStartDefaults({}, root('not json'), alive)).toBeUndefined();
    expect(npmStartDefaults({}, root({ env: stackEnv }), alive)).toBeUndefined();
  });

  it('NPM_START_FILE names another one (a second npm start)', () => {
    const dir = root({ pid: 4242, env: { BUS_PREFIX: 'second' } }, '.data/npm-start-4242.json');
    expect(npmStartDefaults({ NPM_START_FILE: '.data/npm-start-4242.json' }, dir, alive)?.settings).toEqual({
      BUS_PREFIX: 'second',
    });
  });
});

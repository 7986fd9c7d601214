import { describe, expect, it } from 'vitest';
import { parseBridgeArgs } from './cli';

describe('parseBridgeArgs: --env, what a stdio server gets of the environment', () => {
  const bridgeEnv = { SHARED: 'from the bridge', NATS_CREDS: '/secret/agent.creds' };

  it("passes the bridge's value of NAME, sets NAME=value, and nothing unnamed", () => {
    const { upstream } = parseBridgeArgs(
      ['--agent', 'a', '--env', 'SHARED', '--env', 'MODE=fast', '--env', 'UNSET', '--', 'server', '--flag'],
      bridgeEnv,
    );
    expect(upstream).toEqual({
      kind: 'stdio',
      command: 'server',
      args: ['--flag'],
      env: { SHARED: 'from the bridge', MODE: 'fast' },
    });
  });

  it('refuses a name that is not one, and --env with --url', () => {
    expect(() => parseBridgeArgs(['--agent', 'a', '--env', '1X=y', '--', 'server'], bridgeEnv)).toThrow(/--env/);
    expect(() => parseBridgeArgs(['--agent', 'a', '--env', 'SHARED', '--url', 'https://h/mcp'], bridgeEnv)).toThrow(
      /--env is for a stdio server/,
    );
  });
});

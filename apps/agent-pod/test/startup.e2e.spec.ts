import { appEntry, ServiceProcess } from '@mcpgw/devstack';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';

/** A pod that cannot start says why, naming the setting, and exits non-zero. */
function start(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [appEntry('agent-pod')],
      { env: { ...process.env, ...env }, timeout: 20_000 },
      (_e, _out, stderr) => resolve({ code: child.exitCode, stderr }),
    );
  });
}

describe('agent pod start-up', () => {
  it('an unreadable NATS credentials file stops it, naming NATS_CREDS, with no stack trace', async () => {
    const { code, stderr } = await start({ NATS_CREDS: '/nonexistent/pod.creds', MANAGEMENT_PORT: '0' });
    expect(code).toBe(1);
    expect(stderr).toContain('NATS_CREDS: cannot read /nonexistent/pod.creds (ENOENT)');
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('a management port that is not a number stops it, naming MANAGEMENT_PORT', async () => {
    const { code, stderr } = await start({ MANAGEMENT_PORT: 'nine' });
    expect(code).toBe(2);
    expect(stderr).toContain('agent-pod: invalid configuration');
    expect(stderr).toContain('MANAGEMENT_PORT="nine"');
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('a pod waiting for its inbox stream says so while it waits, before it is up', async () => {
    // CI's shared NATS (JetStream on, no auth), with a bus prefix no message service has made an
    // inbox stream for: start-up waits.
    const pod = new ServiceProcess('agent-pod', appEntry('agent-pod'), {
      BUS_PREFIX: `nostream${randomBytes(4).toString('hex')}`,
      MANAGEMENT_PORT: '0',
      LOG_LEVEL: 'info',
    });
    try {
      // Buffered start-up logs (as before) show nothing until the app is up, which it never is.
      const waiting = await pod.waitForLog((line) => /inbox stream not there yet/.test(String(line.msg)), 30_000);
      expect(waiting.level).toBe('warn');
      expect(pod.running).toBe(true);
      expect(pod.logs.some((line) => line.msg === 'listening')).toBe(false);
    } finally {
      await pod.stop();
    }
  });
});

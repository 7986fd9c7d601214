import { createServer, type Server } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from './ports';

describe('freePort', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it.runIf(process.platform === 'linux')(
    'picks below the ephemeral range, where no outgoing connection can take the port first',
    async () => {
      const ephemeralLow = Number(
        readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
      );
      const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
      for (const port of ports) {
        expect(port).toBeGreaterThanOrEqual(10_000);
        expect(port).toBeLessThan(ephemeralLow);
      }
      // Never the same port twice from one process, even before anything binds it.
      expect(new Set(ports).size).toBe(ports.length);
    },
  );

  it('hands out a port that can be listened on', async () => {
    const port = await freePort();
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
  });
});

import { readFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';

/**
 * A TCP port that was free a moment ago, for a child process to listen on.
 *
 * Picked at random below the kernel's ephemeral range (Linux:
 * /proc/sys/net/ipv4/ip_local_port_range, 32768-60999 by default), never by
 * `listen(0)`: a port the kernel hands out for `listen(0)` comes from that range,
 * and before the child binds it an outgoing connection (a database pool, a NATS
 * client) of any process may take it as its local port: EADDRINUSE, seen when
 * two test files start stacks at once. Below the range only another picker can
 * collide, and this process never hands out a port twice.
 */
export async function freePort(): Promise<number> {
  const [low, high] = pickRange();
  for (let tries = 0; high > low && tries < 50; tries++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (handedOut.has(port)) continue;
    // Taken before the check, so that a concurrent pick in this process cannot choose it too.
    handedOut.add(port);
    if (await listens(port)) return port;
    handedOut.delete(port);
  }
  return kernelPicked();
}

const handedOut = new Set<number>();
const LOWEST = 10_000;

/** Where to pick: from LOWEST to just below the ephemeral range (none where that is unknown or too low). */
function pickRange(): [number, number] {
  try {
    const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(ephemeralLow) && ephemeralLow > LOWEST + 1_000) return [LOWEST, ephemeralLow - 1];
  } catch {
    // Not Linux: macOS's ephemeral range starts at 49152.
    if (process.platform === 'darwin') return [LOWEST, 49_151];
  }
  return [0, 0];
}

/** Whether 127.0.0.1:port can be listened on now (the check; the caller's child binds it later). */
function listens(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The kernel's pick (`listen(0)`), where no range below the ephemeral one is known. */
function kernelPicked(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Whether something accepts TCP connections at host:port. */
export function isListening(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, host, () => done(true));
  });
}

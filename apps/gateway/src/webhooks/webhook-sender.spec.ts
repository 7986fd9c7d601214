import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeWebhookPools, sendWebhook } from './webhook-sender';

/** A real receiver on loopback; each path answers one way. */
const answers: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  '/ok': (_req, res) => res.writeHead(204).end(),
  '/retry-seconds': (_req, res) => res.writeHead(429, { 'Retry-After': '7' }).end('slow down'),
  '/retry-date': (_req, res) =>
    res.writeHead(503, { 'Retry-After': new Date(Date.now() + 60_000).toUTCString() }).end(),
  '/interim': (_req, res) => {
    res.writeProcessing();
    res.writeHead(200).end('{"ok":true}');
  },
  // An answer that never ends: the attempt reads its status, then cuts it.
  '/endless': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    const chunk = 'x'.repeat(16 * 1024);
    const more = setInterval(() => res.write(chunk), 5);
    res.on('close', () => clearInterval(more));
  },
  '/hang': () => undefined,
  '/hang-body': (_req, res) => res.writeHead(200, { 'content-length': '10' }).write('12345'),
};

let server: Server;
let base: URL;
const seen: { path: string; body: string; signature?: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', body, signature: req.headers['webhook-signature'] as string | undefined });
      (answers[req.url ?? ''] ?? ((_q, s: ServerResponse) => s.writeHead(404).end()))(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

afterAll(async () => {
  await closeWebhookPools();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const loopback = { address: '127.0.0.1', family: 4 as const };
const post = (path: string, timeoutMs = 2_000) =>
  sendWebhook(new URL(path, base), loopback, { 'webhook-signature': 'v1,abc' }, '{"type":"t"}', timeoutMs);
/** A POST and how long it took by the wall clock, ms. */
async function timedPost(path: string, timeoutMs: number) {
  const started = Date.now();
  const result = await post(path, timeoutMs);
  return { result, tookMs: Date.now() - started };
}

describe('sendWebhook', () => {
  it('sends the body and headers, and reads the status', async () => {
    const result = await post('/ok');
    expect(result).toMatchObject({ status: 204 });
    expect(result.error).toBeUndefined();
    expect(seen.find((s) => s.path === '/ok')).toMatchObject({ body: '{"type":"t"}', signature: 'v1,abc' });
  });

  it('reads Retry-After as seconds or as an HTTP date', async () => {
    expect(await post('/retry-seconds')).toMatchObject({ status: 429, retryAfterMs: 7_000 });
    const dated = await post('/retry-date');
    expect(dated.status).toBe(503);
    expect(dated.retryAfterMs).toBeGreaterThan(50_000);
    expect(dated.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('takes the final status after an interim 1xx', async () => {
    expect(await post('/interim')).toMatchObject({ status: 200 });
  });

  it('cuts an answer past 64 KiB and keeps its status; the pool still sends after it', async () => {
    const { result, tookMs } = await timedPost('/endless', 10_000);
    expect(tookMs).toBeLessThan(5_000);
    expect(result).toMatchObject({ status: 200 });
    expect(result.error).toBeUndefined();
    expect(await post('/ok')).toMatchObject({ status: 204 });
  });

  it('cuts the whole attempt at the timeout', async () => {
    const { result, tookMs } = await timedPost('/hang', 300);
    expect(result).toEqual({ error: 'timeout after 300 ms', durationMs: expect.any(Number) });
    expect(tookMs).toBeLessThan(2_000);
    expect(await post('/ok')).toMatchObject({ status: 204 });
  });

  it('an answer whose body stalls is cut at the timeout, and counts by its status', async () => {
    const { result, tookMs } = await timedPost('/hang-body', 300);
    expect(tookMs).toBeLessThan(2_000);
    expect(result).toMatchObject({ status: 200 });
    expect(result.error).toBeUndefined();
  });

  it('names the failure when nothing answers', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await sendWebhook(new URL(`http://127.0.0.1:${port}/`), loopback, {}, '{}', 2_000);
    expect(result).toMatchObject({ error: 'ECONNREFUSED' });
    expect(result.status).toBeUndefined();
  });

  it('connects to the checked address, whatever the URL names', async () => {
    // The host does not resolve; the pinned address is what the socket connects to.
    const url = new URL(`http://receiver.invalid:${base.port}/ok`);
    expect(await sendWebhook(url, loopback, {}, '{}', 2_000)).toMatchObject({ status: 204 });
  });
});

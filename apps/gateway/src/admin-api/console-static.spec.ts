import Fastify, { type FastifyInstance } from 'fastify';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, installConsole } from './console-static';

/**
 * The console's static files through a real Fastify server (inject): only the
 * files of the build, each page with the CSP; the browser half (the CSP
 * enforced, the pages working) is apps/gateway/test/console.e2e.spec.ts.
 */
describe('installConsole', () => {
  const dir = mkdtempSync(join(tmpdir(), 'console-static-'));
  let served: FastifyInstance;
  let unbuilt: FastifyInstance;

  beforeAll(async () => {
    mkdirSync(join(dir, 'dist', 'assets'), { recursive: true });
    writeFileSync(join(dir, 'dist', 'index.html'), '<!doctype html><title>console</title>');
    writeFileSync(join(dir, 'dist', 'assets', 'index-abc.js'), 'export {}');
    writeFileSync(join(dir, 'secret.txt'), 'outside the build');
    served = Fastify();
    installConsole(served, join(dir, 'dist'));
    unbuilt = Fastify();
    installConsole(unbuilt, join(dir, 'nothing'));
  });

  afterAll(async () => {
    await served.close();
    await unbuilt.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves index.html and the hashed assets, with the CSP and no framing', async () => {
    const page = await served.inject('/console/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.body).toContain('<title>console</title>');
    const script = await served.inject('/console/assets/index-abc.js');
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await served.inject('/console')).headers.location).toBe('/console/');
  });

  it('serves nothing but the files of the build', async () => {
    for (const url of [
      '/console/secret.txt',
      '/console/../secret.txt',
      '/console/%2e%2e/secret.txt',
      '/console/assets/..%2f..%2fsecret.txt',
      '/console/assets/',
      '/console/nothing.js',
    ]) {
      const answer = await served.inject(url);
      expect(answer.body, url).not.toContain('outside the build');
      expect(answer.statusCode, url).not.toBe(200);
    }
  });

  it('answers 503 when the console was not built', async () => {
    const answer = await unbuilt.inject('/console/');
    expect(answer.statusCode).toBe(503);
    expect(answer.json()).toMatchObject({ error: { code: 'unavailable' } });
  });
});

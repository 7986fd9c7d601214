import Fastify, { type FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpAdapterHost } from '@nestjs/core';
import { FileContentRoutes } from './file-content.routes';
import { fileErrors } from './file-errors';
import type { FilesService } from './files.service';

const HTML = '<html><script>alert(document.cookie)</script></html>';

/** The file routes on a bare Fastify, over a FilesService that serves one uploaded file (or refuses). */
async function routesServing(download: FilesService['download']): Promise<FastifyInstance> {
  const fastify = Fastify();
  const host = { httpAdapter: { getInstance: () => fastify } } as unknown as HttpAdapterHost;
  new FileContentRoutes({ download } as FilesService, host).onModuleInit();
  await fastify.ready();
  return fastify;
}

describe('file downloads', () => {
  let fastify: FastifyInstance | undefined;
  afterEach(async () => fastify?.close());

  it('say X-Content-Type-Options: nosniff, so a browser never runs an upload as HTML', async () => {
    fastify = await routesServing(async () => ({
      file: {
        size: HTML.length,
        contentType: 'text/plain',
        filename: 'notes.txt',
        sha256: 'a'.repeat(64),
      } as Awaited<ReturnType<FilesService['download']>>['file'],
      body: Readable.from([HTML]),
    }));
    const answer = await fastify.inject({ method: 'GET', url: `/api/v1/files/${randomUUID()}/content?sig=x` });
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toBe(HTML);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
  });

  it('and so do their refusals', async () => {
    fastify = await routesServing(async () => {
      throw fileErrors.forbidden('tampered', 'the URL was altered');
    });
    const answer = await fastify.inject({ method: 'GET', url: `/api/v1/files/${randomUUID()}/content?sig=x` });
    expect(answer.statusCode).toBe(403);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
  });
});

import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { installRequestIds } from './request-ids';

describe('installRequestIds', () => {
  it('marks every answer nosniff, JSON, errors and bodies written by hand alike', async () => {
    const fastify = Fastify();
    installRequestIds(fastify, () => false);
    fastify.get('/json', async () => ({ ok: true }));
    fastify.get('/hand', (_request, reply) => {
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'text/event-stream' });
      reply.raw.end('data: {}\n\n');
    });
    await fastify.ready();
    for (const url of ['/json', '/hand', '/missing']) {
      const answer = await fastify.inject({ method: 'GET', url });
      expect(answer.headers['x-content-type-options'], url).toBe('nosniff');
      expect(answer.headers['x-request-id'], url).toBeTruthy();
    }
    await fastify.close();
  });
});

import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { JsonLogger } from '../json-logger';
import { acceptRequestId } from './log-context';
import { REDACTED } from './redaction';

const apiKey = 'bak_AbC-123_xyz9_S3cr3t-_abcdefghijklmnopqrstuvwxyz012345678';
const grant = 'eyJhbGciOiJFZERTQSJ9.eyJ3cyI6ImRlbW8ifQ.c2lnbmF0dXJl';

describe('JsonLogger (pino)', () => {
  const lines: string[] = [];
  const logger = new JsonLogger('svc', 'debug', { instance: 'i1' }, { write: (line: string) => lines.push(line) });
  const parsed = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  beforeEach(() => (lines.length = 0));

  it('writes level names, service, instance and context, as the hand-written logger did', () => {
    logger.debug({ msg: 'hello', n: 1 }, 'Ctx');
    logger.verbose('below debug');
    expect(parsed()).toEqual([
      { level: 'debug', time: expect.any(String), service: 'svc', instance: 'i1', context: 'Ctx', msg: 'hello', n: 1 },
    ]);
  });

  it('redacts secret fields by name, at the top and nested', () => {
    logger.log({
      msg: 'headers',
      authorization: `Bearer ${grant}`,
      headers: { 'x-agent-api-key': apiKey, cookie: 'c=1', accept: '*/*' },
      req: { headers: { authorization: 'Basic dXNlcjpwYXNz' } },
      credentials: ['github'],
      password: 'hunter2',
    });
    expect(parsed()[0]).toMatchObject({
      authorization: REDACTED,
      headers: { 'x-agent-api-key': REDACTED, cookie: REDACTED, accept: '*/*' },
      req: { headers: { authorization: REDACTED } },
      credentials: REDACTED,
      password: REDACTED,
    });
    expect(lines[0]).not.toContain('hunter2');
  });

  it('redacts secrets by shape wherever they are: message, any field, a stack', () => {
    logger.warn(`key ${apiKey} refused`);
    logger.error({ msg: 'failed', detail: { deep: { deeper: { value: grant } } } });
    logger.error(new Error(`bad grant ${grant}`));
    const all = lines.join('');
    expect(all).not.toContain(apiKey);
    expect(all).not.toContain('S3cr3t');
    expect(all).not.toContain(grant);
    expect(parsed()[0].msg).toBe('key bak_AbC-123_xyz9_… refused');
    expect(parsed()[1]).toMatchObject({ detail: { deep: { deeper: { value: '[jwt]' } } } });
  });

  it('carries the request id a line names, and adds none by itself', async () => {
    logger.log({ msg: 'about a request', request_id: 'req-1' });
    await new Promise((resolve) => setTimeout(resolve, 1));
    logger.log('not about one');
    expect(parsed().map((l) => [l.msg, l.request_id])).toEqual([
      ['about a request', 'req-1'],
      ['not about one', undefined],
    ]);
  });

  describe('with tracing on', () => {
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    afterAll(() => context.disable());

    it('adds trace_id and span_id of the active span', () => {
      const spanContext = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 };
      context.with(trace.setSpanContext(context.active(), spanContext), () => logger.log('traced'));
      expect(parsed()[0]).toMatchObject({ trace_id: spanContext.traceId, span_id: spanContext.spanId });
    });
  });
});

describe('acceptRequestId', () => {
  it("takes a caller's safe id, else makes a UUID", () => {
    expect(acceptRequestId('test-req-123')).toBe('test-req-123');
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    for (const bad of [undefined, '', 'x'.repeat(129), 'has space', 'new\nline', '"quote"', ['a', 'b']]) {
      expect(acceptRequestId(bad)).toMatch(uuid);
    }
  });
});

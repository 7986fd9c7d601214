import { afterEach, describe, expect, it, vi } from 'vitest';
import { JsonLogger } from './json-logger';

describe('JsonLogger', () => {
  const lines: string[] = [];
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (lines.push(String(chunk)), true));
  afterEach(() => (lines.length = 0));

  it('writes one JSON object per line, with service, level and context', () => {
    new JsonLogger('svc', 'info', { instance: 'i1' }).log({ msg: 'hello', n: 1 }, 'Ctx');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({
      level: 'info',
      service: 'svc',
      instance: 'i1',
      context: 'Ctx',
      msg: 'hello',
      n: 1,
    });
  });

  it('drops lines below its level', () => {
    const logger = new JsonLogger('svc', 'warn');
    logger.log('quiet');
    logger.debug('quieter');
    logger.warn('loud');
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['loud']);
  });

  it('keeps the stack of an error for the operator', () => {
    new JsonLogger('svc').error(new Error('bad'));
    expect(JSON.parse(lines[0])).toMatchObject({
      level: 'error',
      msg: 'bad',
      stack: expect.stringContaining('Error: bad'),
    });
    expect(write).toHaveBeenCalled();
  });
});

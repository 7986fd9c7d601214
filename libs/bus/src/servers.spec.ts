import { describe, expect, it } from 'vitest';
import { natsServers } from './servers';

describe('natsServers (NATS_URL)', () => {
  it('takes one server, or a comma-separated list with spaces around the commas', () => {
    expect(natsServers('nats://127.0.0.1:4222')).toEqual(['nats://127.0.0.1:4222']);
    expect(natsServers('nats://a:4222, nats://b:4223 ,nats://c:4224,')).toEqual([
      'nats://a:4222',
      'nats://b:4223',
      'nats://c:4224',
    ]);
  });

  it('refuses a setting that names no server', () => {
    expect(() => natsServers(' , ')).toThrow(/names no server/);
  });
});

import { describe, expect, it } from 'vitest';
import { isDatabaseUnreachable } from './database-errors';
import { hostSelectingClient, NoDatabaseHostError } from './host-selecting-client';

describe('hostSelectingClient without a server', () => {
  it('fails as "unreachable" when no host accepts, naming each host tried', async () => {
    const HostClient = hostSelectingClient('postgres://u@127.0.0.1:1,127.0.0.1:2/db?target_session_attrs=read-write');
    const client = new HostClient({ connectionTimeoutMillis: 2_000 });
    const error = await client.connect().catch((e: Error) => e);
    expect(error).toBeInstanceOf(NoDatabaseHostError);
    expect((error as Error).message).toMatch(/127\.0\.0\.1:1: .*; 127\.0\.0\.1:2: /);
    expect(isDatabaseUnreachable(error)).toBe(true);
  });

  it('calls back with the error too (as pg-pool connects)', async () => {
    const HostClient = hostSelectingClient('postgres://u@127.0.0.1:1,127.0.0.1:2/db');
    const client = new HostClient({ connectionTimeoutMillis: 2_000 });
    const error = await new Promise((resolve) => client.connect((e) => resolve(e)));
    expect(isDatabaseUnreachable(error)).toBe(true);
  });
});

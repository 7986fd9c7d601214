import { mintApiKey } from '@mcpgw/grants';
import { describe, expect, it } from 'vitest';
import type { CacheInvalidationService } from '../cache/cache-invalidation.service';
import type { GatewayEnv } from '../config/gateway.env';
import { ApiKeyAuthenticator } from './api-key-authenticator.service';
import type { ApiKeysStore } from './api-keys.store';

type Row = { id: string; agent_id: string; digest: Buffer };

/** A store whose full reads the test releases by hand, and a notice channel the test speaks on. */
function harness() {
  const table = new Map<string, Row>();
  const pendingLists: { snapshot: Row[]; release: () => void }[] = [];
  const store = {
    listActiveDigests: () =>
      new Promise<Row[]>((resolve) => {
        const snapshot = [...table.values()];
        pendingLists.push({ snapshot, release: () => resolve(snapshot) });
      }),
    findActive: async (id: string) => table.get(id),
  } as unknown as ApiKeysStore;
  let notice: (id: string) => void = () => undefined;
  const invalidation = {
    on: (_topic: string, listener: (id: string) => void) => (notice = listener),
  } as unknown as CacheInvalidationService;
  const authenticator = new ApiKeyAuthenticator(store, { AUTH_CACHE_TTL_MS: 60_000 } as GatewayEnv, invalidation);
  return { table, pendingLists, authenticator, notice: (id: string) => notice(id) };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('ApiKeyAuthenticator', () => {
  it('keeps a key revoked whose notice arrives while a reload reads an older snapshot', async () => {
    const { table, pendingLists, authenticator, notice } = harness();
    const key = mintApiKey();
    table.set(key.id, { id: key.id, agent_id: 'agent-1', digest: key.digest });
    const started = authenticator.onModuleInit();
    pendingLists.shift()!.release();
    await started;
    expect((await authenticator.authenticate(key.key, 'agent-1')).ok).toBe(true);

    // A periodic reload reads the table (the key still active), then the key is revoked
    // and its notice heard, and only then does the reload's snapshot come back.
    const reload = (authenticator as unknown as { reload(): Promise<void> }).reload();
    const stale = pendingLists.shift()!;
    table.delete(key.id);
    notice(key.id);
    await settle();
    expect((await authenticator.authenticate(key.key, 'agent-1')).ok).toBe(false);
    stale.release();
    await reload;

    expect(stale.snapshot.map((row) => row.id)).toContain(key.id);
    expect(await authenticator.authenticate(key.key, 'agent-1')).toEqual({
      ok: false,
      reason: 'invalid or revoked API key',
    });
    authenticator.onApplicationShutdown();
  });

  it('keeps a key created during a reload that read the table before it', async () => {
    const { table, pendingLists, authenticator, notice } = harness();
    const started = authenticator.onModuleInit();
    const stale = pendingLists.shift()!;
    const key = mintApiKey();
    table.set(key.id, { id: key.id, agent_id: 'agent-1', digest: key.digest });
    notice(key.id);
    await settle();
    stale.release();
    await started;
    expect((await authenticator.authenticate(key.key, 'agent-1')).ok).toBe(true);
    authenticator.onApplicationShutdown();
  });
});

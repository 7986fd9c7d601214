import { NotFoundError } from '@mcpgw/contracts';
import { KYSELY } from '@mcpgw/persistence';
import type { Kysely } from 'kysely';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessagingTables } from '../src/database/schema';
import { MessagesService } from '../src/messages/messages.service';
import { RetentionService, retentionPurgedMetric } from '../src/retention/retention.service';
import { RetentionStore } from '../src/retention/retention.store';
import { startInProcessMessageService, type InProcessMessageService } from './in-process';

const AGENT = 'retention-agent';

/**
 * Retention on the real database, with retentions of seconds (set by env): the
 * expired channels go, in batches, with their messages; young channels, busy
 * ones and one with an unanswered message someone may wait for stay.
 */
describe('retention deletes expired channels and their messages', () => {
  let service: InProcessMessageService;
  let messages: MessagesService;
  let retention: RetentionService;
  let store: RetentionStore;

  beforeAll(async () => {
    service = await startInProcessMessageService('retention', {
      CHANNEL_RETENTION_SECONDS: '3',
      SINGLE_CALL_RETENTION_SECONDS: '1',
      RETENTION_PURGE_BATCH: '7',
      // The test purges by hand.
      RETENTION_PURGE_INTERVAL_MS: '3600000',
    });
    messages = service.app.get(MessagesService);
    retention = service.app.get(RetentionService);
    store = service.app.get(RetentionStore);
  });

  afterAll(async () => {
    await service?.stop();
  });

  const ask = async (channelId?: string, meta?: Record<string, unknown>) => {
    const id = randomUUID();
    const posted = await messages.post(
      {
        type: 'chat_message',
        id,
        ...(channelId ? { channel_id: channelId } : {}),
        agent_id: AGENT,
        sender: { kind: 'user', id: 'tester' },
        created_at: new Date().toISOString(),
        text: 'hello',
        ...(meta ? { meta } : {}),
      },
      'gateway',
    );
    return { channelId: posted.channel_id, messageId: id };
  };
  const answer = (channelId: string, messageId: string) =>
    messages.post(
      {
        type: 'agent_reply',
        id: randomUUID(),
        channel_id: channelId,
        in_reply_to: messageId,
        agent_id: AGENT,
        created_at: new Date().toISOString(),
        content: [{ type: 'text', text: 'hi' }],
      },
      'rest',
    );
  const call = async (channelId?: string) => {
    const asked = await ask(channelId);
    await answer(asked.channelId, asked.messageId);
    return asked.channelId;
  };
  const stored = (channelId: string) =>
    messages.list(channelId).then(
      (list) => list.length,
      (error) => (error instanceof NotFoundError ? 'gone' : Promise.reject(error)),
    );
  const purgedSoFar = () => Object.fromEntries([...retentionPurgedMetric.read()].map(([l, v]) => [l.kind, v]));

  it('deletes old channels in batches, keeps young and busy ones and those with a call in flight', async () => {
    const oldSingle = await Promise.all(Array.from({ length: 20 }, () => call()));
    const oldMulti = await call();
    await call(oldMulti);
    const busy = await call();
    await call(busy);
    // Unanswered, with 60 s left to the agent: someone may still wait for it.
    const inFlight = (await ask(undefined, { timeout_ms: 60_000 })).channelId;
    await sleep(3_500);
    await call(busy); // its newest message is young: the whole channel stays
    const young = await call();
    const before = purgedSoFar();

    const run = await retention.purge();

    expect(run).toMatchObject({ ran: true, channels: 21, messages: 44 });
    // 7 channels a statement: 24 channels old enough to look at take 4 batches.
    expect(run.batches).toBe(4);
    for (const id of [...oldSingle, oldMulti]) expect(await stored(id)).toBe('gone');
    expect(await stored(busy)).toBe(6);
    expect(await stored(young)).toBe(2);
    expect(await stored(inFlight)).toBe(1);
    expect(purgedSoFar()).toEqual({ channels: before.channels + 21, messages: before.messages + 44 });
    // A second run finds nothing more.
    expect(await retention.purge()).toMatchObject({ ran: true, channels: 0, messages: 0 });
  });

  it('a message for a purged channel is refused as not found, not an error of the database', async () => {
    const channelId = await call();
    await sleep(1_500);
    await retention.purge();
    expect(await stored(channelId)).toBe('gone');
    await expect(ask(channelId)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('only one replica purges at a time: another run while the lock is held does nothing', async () => {
    const channelId = await call();
    await sleep(1_500);
    const other = await store.whileLocked(() => retention.purge());
    expect(other).toEqual({ ran: false, batches: 0, channels: 0, messages: 0 });
    expect(await stored(channelId)).toBe(2);
    // Channels of the tests before may expire now too.
    expect((await retention.purge()).channels).toBeGreaterThanOrEqual(1);
    expect(await stored(channelId)).toBe('gone');
  });

  it('two purges of the same channels at once (no lock) delete each row once, without errors', async () => {
    const channels = await Promise.all(Array.from({ length: 30 }, () => call()));
    await sleep(1_500);
    const db = service.app.get<Kysely<MessagingTables>>(KYSELY);
    const policy = { retentionSeconds: 3, singleCallRetentionSeconds: 1, waitMaxMs: 1_000, batch: 100 };
    const both = await Promise.all([
      db.connection().execute((conn) => store.purgeBatch(conn, policy)),
      db.connection().execute((conn) => store.purgeBatch(conn, policy)),
    ]);
    expect(both[0].channels + both[1].channels).toBe(30);
    expect(both[0].messages + both[1].messages).toBe(60);
    for (const id of channels) expect(await stored(id)).toBe('gone');
  });

  it('a message posted while its channel is being purged is either stored (the channel stays) or not_found, never lost', async () => {
    const channels = await Promise.all(Array.from({ length: 60 }, () => call()));
    await sleep(1_500);
    const [posts] = await Promise.all([Promise.allSettled(channels.map((id) => ask(id))), retention.purge()]);
    for (const [i, post] of posts.entries()) {
      if (post.status === 'rejected') {
        expect(post.reason).toBeInstanceOf(NotFoundError);
        expect(await stored(channels[i])).toBe('gone');
      } else {
        // Stored: the purge saw the new message (or skipped the locked channel) and kept the channel.
        expect(await stored(channels[i])).toBe(3);
      }
    }
  });
});

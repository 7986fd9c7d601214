import { preparedName, sqlMeter, type SqlMeter } from '@mcpgw/persistence';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { MessagesService } from '../src/messages/messages.service';
import { WaitService } from '../src/wait/wait.service';
import { startInProcessMessageService, type InProcessMessageService } from './in-process';

/**
 * The message service in this process, on the real database and bus, with every
 * SQL statement counted: a waiter reads the database when it starts and once
 * at its deadline, never in a loop.
 */
describe('a waiter does not poll the database', () => {
  let service: InProcessMessageService;
  let queries: MockInstance<SqlMeter['statement']>;
  let messages: MessagesService;
  let waits: WaitService;

  beforeAll(async () => {
    service = await startInProcessMessageService('nopoll');

    // Every statement the app sends, through Kysely or TypeORM, passes the process's SQL meter.
    queries = vi.spyOn(sqlMeter, 'statement');
    messages = service.app.get(MessagesService);
    waits = service.app.get(WaitService);
  });

  afterAll(async () => {
    await service?.stop();
  });

  const conversation = async () => {
    const channel = await messages.createChannel('nopoll-agent');
    const id = randomUUID();
    await messages.post({
      type: 'chat_message',
      id,
      channel_id: channel.id,
      agent_id: 'nopoll-agent',
      sender: { kind: 'user', id: 'tester' },
      created_at: new Date().toISOString(),
      text: 'anyone?',
    });
    return { channelId: channel.id, messageId: id };
  };

  it('a wait that times out after 1.5 s reads the database twice: at the start and at the deadline', async () => {
    const { channelId, messageId } = await conversation();
    queries.mockClear();
    const result = await waits.waitForReply(channelId, messageId, 1_500);
    expect(result).toEqual({ status: 'timeout' });
    expect(queries).toHaveBeenCalledTimes(2);
  });

  it('a wait woken by a reply reads the database once', async () => {
    const { channelId, messageId } = await conversation();
    queries.mockClear();
    const waiting = waits.waitForReply(channelId, messageId, 10_000);
    await vi.waitUntil(() => queries.mock.calls.length === 1); // the wait's one read
    await messages.post({
      type: 'agent_reply',
      id: randomUUID(),
      channel_id: channelId,
      agent_id: 'nopoll-agent',
      in_reply_to: messageId,
      created_at: new Date().toISOString(),
      content: [{ type: 'text', text: 'here' }],
    });
    const afterPost = queries.mock.calls.length;
    const result = await waiting;
    expect(result).toMatchObject({ status: 'replied', reply: { in_reply_to: messageId } });
    expect(queries.mock.calls.length).toBe(afterPost); // woken by the bus, not by another read
  });

  it('post-and-wait of a new message only writes it, and reads once at the deadline', async () => {
    const channel = await messages.createChannel('nopoll-agent');
    queries.mockClear();
    const posted = await waits.postAndWait(
      {
        type: 'chat_message',
        id: randomUUID(),
        channel_id: channel.id,
        agent_id: 'nopoll-agent',
        sender: { kind: 'user', id: 'tester' },
        created_at: new Date().toISOString(),
        text: 'nobody will answer',
      },
      1_000,
    );
    expect(posted.result).toEqual({ status: 'timeout' });
    // The write (the group commit's one statement, prepared: WITH … INSERT INTO messages …), then the one read.
    const statements = queries.mock.calls.map(([sql]) => withoutMark(String(sql)));
    expect(statements.map((sql) => sql.split(/\s+/)[0])).toEqual(['WITH', 'SELECT']);
    expect(statements[0]).toContain('INSERT INTO messages');
    // Named, parsed once per connection: it runs at the rate of the calls (messages.store.ts).
    expect(preparedName(String(queries.mock.calls[0][0]))).toBeDefined();
  });
});

/** A statement's text without the "prepared" comment a named statement starts with (libs/persistence prepared.ts). */
function withoutMark(sql: string): string {
  return sql.replace(/^\s*\/\*[^*]*\*\/\s*/, '').trim();
}

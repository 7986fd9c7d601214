import { postgresOptions } from '@mcpgw/persistence';
import type { DataSourceOptions } from 'typeorm';
import { ChannelsAndMessages1764450000000 } from './migrations/1764450000000-channels-and-messages';
import { MessageSender1764460000000 } from './migrations/1764460000000-message-sender';
import { ChannelsByAge1764800000000 } from './migrations/1764800000000-channels-by-age';
import { MessagesByCallId1764900000000 } from './migrations/1764900000000-messages-by-call-id';
import { MessageTraceId1765000000000 } from './migrations/1765000000000-message-trace-id';
import { ConversationsByAgent1765000000001 } from './migrations/1765000000001-conversations-by-agent';
import { MessageFingerprint1765100000000 } from './migrations/1765100000000-message-fingerprint';
import { MessageKeyRef1765200000000 } from './migrations/1765200000000-message-key-ref';

/** The message service keeps its tables in this schema. */
export const MESSAGING_SCHEMA = 'messaging';

export function messagingDatabase(url: string, poolSize?: number): DataSourceOptions {
  return postgresOptions({
    url,
    schema: MESSAGING_SCHEMA,
    poolSize,
    migrations: [
      ChannelsAndMessages1764450000000,
      MessageSender1764460000000,
      ChannelsByAge1764800000000,
      MessagesByCallId1764900000000,
      MessageTraceId1765000000000,
      ConversationsByAgent1765000000001,
      MessageFingerprint1765100000000,
      MessageKeyRef1765200000000,
    ],
  });
}

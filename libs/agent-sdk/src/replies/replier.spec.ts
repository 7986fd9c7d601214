import type { ChatMessage } from '@mcpgw/contracts';
import type { BusClient } from '@mcpgw/bus/core';
import { describe, expect, it } from 'vitest';
import { Replier } from './replier';

describe('Replier.toReply', () => {
  // toReply touches neither the bus nor anything but the pod id.
  const replier = new Replier({} as BusClient, 'a1', 'pod-1');
  const message = { id: 'm1', channel_id: 'c1', agent_id: 'a1' } as ChatMessage;

  it('keeps a storable output as it is', () => {
    const reply = replier.toReply(message, { content: [{ type: 'text', text: 'ok \\u0000 as text' }] });
    expect(reply).toMatchObject({
      in_reply_to: 'm1',
      content: [{ text: 'ok \\u0000 as text' }],
      meta: { pod_id: 'pod-1' },
    });
    expect(reply.is_error).toBeUndefined();
  });

  it('turns an output holding U+0000 (which jsonb cannot store) into a tool error that says so', () => {
    for (const output of [
      { content: [{ type: 'text' as const, text: 'a\u0000b' }] },
      { content: [{ type: 'text' as const, text: 'fine' }], structured: { ['k\u0000']: 1 } },
    ]) {
      const reply = replier.toReply(message, output);
      expect(reply.is_error).toBe(true);
      expect(reply.structured_content).toBeUndefined();
      expect(JSON.stringify(reply.content)).toContain('U+0000');
    }
  });
});

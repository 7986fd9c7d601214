import { CALL_ID_META_KEY, type ContentItem } from '@mcpgw/contracts';
import type { CallOutcome } from '../calls/call-shapes';
import type { Message, Part } from './wire';

/**
 * The agent's reply as an A2A agent message: each MCP content item as a part
 * (text as `text`, images and audio as `raw`, resource links as `url`), the
 * structured result as a `data` part. Its metadata names the call and the skill
 * (none for a conversational message's answer),
 * and says when the skill answered with an error the caller could correct
 * (MCP's `isError`: not a protocol failure).
 */
export function agentMessage(outcome: CallOutcome, skill: string, contextId: string): Message {
  const parts = outcome.content.map(toPart);
  if (outcome.structuredContent) parts.push({ data: outcome.structuredContent, mediaType: 'application/json' });
  return {
    messageId: outcome.callId,
    contextId,
    role: 'ROLE_AGENT',
    parts,
    metadata: {
      ...(skill && { skill }),
      [CALL_ID_META_KEY]: outcome.callId,
      ...(outcome.isError && { isError: true }),
    },
  };
}

export function toPart(item: ContentItem): Part {
  switch (item.type) {
    case 'text':
      return { text: item.text };
    case 'image':
    case 'audio':
      return { raw: item.data, mediaType: item.mimeType };
    case 'resource_link':
      return { url: item.uri, filename: item.name, ...(item.mimeType && { mediaType: item.mimeType }) };
    case 'resource': {
      const { uri, mimeType, text, blob } = item.resource;
      const media = mimeType ? { mediaType: mimeType } : {};
      if (text !== undefined) return { text, ...media, metadata: { uri } };
      if (blob !== undefined) return { raw: blob, ...media, metadata: { uri } };
      return { url: uri, ...media };
    }
  }
}

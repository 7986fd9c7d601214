import type { AgentReply, ChatMessage } from '@mcpgw/contracts';
import { text, type Skill } from './skill';

interface Turn {
  tool?: string;
  arguments?: Record<string, unknown>;
  text?: string;
  reply?: string;
}

/** Returns the earlier turns of this conversation, as the agent sees them on its channel. */
export const recallSkill: Skill = {
  definition: {
    name: 'recall',
    title: 'Recall',
    description: 'Returns what the agent remembers of this conversation: the earlier calls and its replies.',
    input_schema: { type: 'object', properties: {}, additionalProperties: false },
    side_effect_class: 'read',
    annotations: { readOnlyHint: true },
  },
  async run(_args, ctx) {
    const messages = (await ctx.history()).map((stored) => stored.envelope);
    const replies = new Map(
      messages.filter((m): m is AgentReply => m.type === 'agent_reply').map((reply) => [reply.in_reply_to, reply]),
    );
    const turns: Turn[] = messages
      .filter((m): m is ChatMessage => m.type === 'chat_message' && m.id !== ctx.message.id)
      .map((m) => ({
        tool: m.tool_call?.name,
        arguments: m.tool_call?.arguments,
        text: m.text,
        reply: replies
          .get(m.id)
          ?.content.map((c) => c.text ?? `[${c.type}]`)
          .join('\n'),
      }));
    return { content: [text(JSON.stringify({ turns }))], structured: { turns } };
  },
};

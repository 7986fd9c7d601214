import type { MessageHandler } from '@mcpgw/agent-sdk';
import type { ChatMessage } from '@mcpgw/contracts';

/**
 * The mock agent's answer to a conversational message: its text back, with how
 * many conversational messages its conversation holds so far (this one
 * included), read from the channel's history: so a test can see that the
 * messages of one A2A contextId share one conversation, and that another
 * contextId starts a new one.
 */
export const echoConversation: MessageHandler = async (message, ctx) => {
  const earlier = (await ctx.history())
    .map((stored) => stored.envelope)
    .filter(
      (m): m is ChatMessage =>
        m.type === 'chat_message' && m.text !== undefined && !m.tool_call && m.id !== ctx.message.id,
    );
  const count = earlier.length + 1;
  const data = message.data ? ` ${JSON.stringify(message.data)}` : '';
  return `you said: ${message.text}${data} (message ${count} of this conversation)`;
};

import { createAgent, defineSkill, ToolError, type MessageHandler } from '@mcpgw/agent-sdk';

/** Reverses text, and says how far along it is. */
const reverse = defineSkill<{ text: string }>({
  name: 'reverse',
  description: 'Reverses text',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  sideEffectClass: 'read',
  async run(args, ctx) {
    ctx.progress(1, 2, 'half way');
    return args.text.split('').reverse().join('');
  },
});

/** Counts words: a text answer for the model, a structured one for programs. */
const wordCount = defineSkill<{ text: string }>({
  name: 'word_count',
  description: 'Counts the words of a text',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  outputSchema: { type: 'object', properties: { words: { type: 'integer' } }, required: ['words'] },
  async run({ text }) {
    if (!text.trim()) throw new ToolError('there is no text to count');
    const words = text.trim().split(/\s+/).length;
    return { content: [{ type: 'text', text: `${words} words` }], structured: { words } };
  },
});

/**
 * Answers conversational messages (an A2A message that names no skill): what was said, and how
 * many messages this conversation holds so far (one A2A contextId is one conversation, its
 * history the channel's). Without a handler the gateway refuses such messages itself.
 */
const chat: MessageHandler = async (message, ctx) => {
  const earlier = (await ctx.history()).filter(
    ({ envelope: m }) => m.type === 'chat_message' && m.text !== undefined && !m.tool_call && m.id !== ctx.message.id,
  );
  return `you said: ${message.text} (message ${earlier.length + 1} of this conversation)`;
};

// NATS_URL, NATS_CREDS and BUS_PREFIX come from the environment; AGENT_ID names the agent.
const agent = createAgent({
  agentId: process.env.AGENT_ID ?? 'my-agent',
  skills: [reverse, wordCount],
  onMessage: chat,
});

agent.start().then(
  () => console.log(`agent ${agent.agentId} is serving; Ctrl-C stops it`),
  (error: Error) => {
    console.error(`the agent could not start: ${error.message}`);
    process.exit(1);
  },
);

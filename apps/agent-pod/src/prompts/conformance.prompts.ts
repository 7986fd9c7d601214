import type { PromptProvider } from '@mcpgw/agent-sdk';

const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** The prompt fixtures of the MCP conformance suite, rendered by the agent. */
export const conformancePrompts: PromptProvider = {
  prompts: [
    { name: 'test_simple_prompt', description: 'A simple prompt without arguments' },
    {
      name: 'test_prompt_with_arguments',
      description: 'A prompt with required arguments',
      arguments: [
        { name: 'arg1', description: 'First test argument', required: true },
        { name: 'arg2', description: 'Second test argument', required: true },
      ],
    },
    {
      name: 'test_prompt_with_embedded_resource',
      description: 'A prompt with an embedded resource',
      arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
    },
    { name: 'test_prompt_with_image', description: 'A prompt with an image' },
    { name: 'test_input_required_result_prompt', description: 'A prompt that asks the user for context first' },
  ],
  async get(name, args, ask) {
    const user = (content: Record<string, unknown>) => ({ role: 'user' as const, content });
    switch (name) {
      case 'test_simple_prompt':
        return { messages: [user({ type: 'text', text: 'This is a simple prompt for testing.' })] };
      case 'test_prompt_with_arguments':
        return {
          messages: [user({ type: 'text', text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` })],
        };
      case 'test_prompt_with_embedded_resource':
        return {
          messages: [
            user({
              type: 'resource',
              resource: {
                uri: args.resourceUri,
                mimeType: 'text/plain',
                text: 'Embedded resource content for testing.',
              },
            }),
            user({ type: 'text', text: 'Please process the embedded resource above.' }),
          ],
        };
      case 'test_prompt_with_image':
        return {
          messages: [
            user({ type: 'image', data: PNG_1X1, mimeType: 'image/png' }),
            user({ type: 'text', text: 'Please analyze the image above.' }),
          ],
        };
      case 'test_input_required_result_prompt': {
        const answer = await ask(
          'elicitation/create',
          {
            mode: 'form',
            message: 'What context should the prompt use?',
            requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] },
          },
          'prompt_context',
        );
        const context = (answer.content as { context?: unknown } | undefined)?.context;
        return { messages: [user({ type: 'text', text: `Use this context: ${String(context ?? '(none)')}` })] };
      }
      default:
        return undefined;
    }
  },
};

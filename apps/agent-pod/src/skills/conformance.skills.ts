import { setTimeout as delay } from 'node:timers/promises';
import { text, type Skill } from './skill';

/**
 * The fixture tools of the official MCP conformance suite
 * (@modelcontextprotocol/conformance, server scenarios), answered by the agent
 * through the bus like any other skill. Sampling and elicitation fixtures are
 * missing on purpose: they need requests from the agent to the client.
 */
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';
const NO_ARGUMENTS = { type: 'object', properties: {} };

function fixture(name: string, description: string, run: Skill['run']): Skill {
  return { definition: { name, description, input_schema: NO_ARGUMENTS, side_effect_class: 'read' }, run };
}

export const CONFORMANCE_SKILLS: readonly Skill[] = [
  fixture('test_simple_text', 'Returns simple text content', async () => ({
    content: [text('This is a simple text response for testing.')],
  })),
  fixture('test_image_content', 'Returns image content', async () => ({
    content: [{ type: 'image', data: PNG_1X1, mimeType: 'image/png' }],
  })),
  fixture('test_audio_content', 'Returns audio content', async () => ({
    content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }],
  })),
  fixture('test_embedded_resource', 'Returns an embedded resource', async () => ({
    content: [
      {
        type: 'resource',
        resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
      },
    ],
  })),
  fixture('test_multiple_content_types', 'Returns text, image and resource content', async () => ({
    content: [
      text('Multiple content types test:'),
      { type: 'image', data: PNG_1X1, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' },
      },
    ],
  })),
  fixture('test_tool_with_logging', 'Sends log messages while it runs', async (_args, ctx) => {
    for (const line of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
      ctx.log('info', line);
      await delay(50, undefined, { signal: ctx.signal });
    }
    return { content: [text('Tool with logging executed successfully')] };
  }),
  fixture('test_error_handling', 'Always returns a tool error', async () => ({
    content: [text('This tool intentionally returns an error for testing')],
    isError: true,
  })),
  fixture('test_tool_with_progress', 'Reports progress while it runs', async (_args, ctx) => {
    for (const step of [0, 50, 100]) {
      ctx.progress(step, 100, `Completed step ${step} of 100`);
      await delay(50, undefined, { signal: ctx.signal });
    }
    return { content: [text('Progress test completed')] };
  }),
  {
    definition: {
      name: 'json_schema_2020_12_tool',
      description: 'Tool with JSON Schema 2020-12 features',
      input_schema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
        properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
        additionalProperties: false,
      },
      side_effect_class: 'read',
    },
    async run(args) {
      return { content: [text(`JSON Schema 2020-12 tool called with ${JSON.stringify(args)}`)] };
    },
  },
];

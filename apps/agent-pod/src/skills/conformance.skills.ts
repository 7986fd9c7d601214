import { setTimeout as delay } from 'node:timers/promises';
import { text, type Skill } from './skill';

/**
 * The fixture tools of the official MCP conformance suite
 * (@modelcontextprotocol/conformance, server scenarios), answered by the agent
 * through the bus like any other skill; those that need the client mid-call
 * (sampling, elicitation) are CONFORMANCE_CLIENT_SKILLS, below. The 2026-07-28
 * suite's diagnostic tools are here too: test_logging_tool, test_param_headers
 * (x-mcp-header), test_missing_capability, test_streaming_elicitation.
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
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  })),
  fixture('test_multiple_content_types', 'Returns text, image and resource content', async () => ({
    content: [
      text('Multiple content types test:'),
      { type: 'image', data: PNG_1X1, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: '{"test":"data","value":123}',
        },
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
  fixture(
    'test_reconnection',
    'Lets the client poll: its stream closes before the result (SSE polling)',
    async (_args, ctx) => {
      ctx.pollLater();
      await delay(300, undefined, { signal: ctx.signal });
      return { content: [text('Reconnection test completed')] };
    },
  ),
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
    // Every JSON Schema 2020-12 keyword the 2026-07-28 suite looks for reaches clients as registered.
    definition: {
      name: 'json_schema_2020_12_tool',
      description: 'Tool with JSON Schema 2020-12 features',
      input_schema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: {
          address: {
            $anchor: 'addressDef',
            type: 'object',
            properties: { street: { type: 'string' }, city: { type: 'string' } },
          },
        },
        properties: {
          name: { type: 'string' },
          address: { $ref: '#/$defs/address' },
          contactMethod: { type: 'string', enum: ['phone', 'email'] },
          phone: { type: 'string' },
          email: { type: 'string' },
        },
        allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
        if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
        then: { required: ['phone'] },
        else: { required: ['email'] },
        additionalProperties: false,
      },
      side_effect_class: 'read',
    },
    async run(args) {
      return { content: [text(`JSON Schema 2020-12 tool called with ${JSON.stringify(args)}`)] };
    },
  },
  fixture(
    'test_logging_tool',
    'Logs while it runs (2026-07-28: sent only when the request sets a logLevel)',
    async (_args, ctx) => {
      for (const line of ['Logging tool started', 'Logging tool working', 'Logging tool done']) ctx.log('info', line);
      return { content: [text('Logging tool executed')] };
    },
  ),
  {
    // SEP-2243: region travels in the Mcp-Param-Region header too, and the gateway checks they agree.
    definition: {
      name: 'test_param_headers',
      description: 'Echoes its region, which 2026-07-28 clients mirror into the Mcp-Param-Region header',
      input_schema: {
        type: 'object',
        properties: {
          region: { type: 'string', description: 'Where to run', 'x-mcp-header': 'Region' },
          priority: { type: 'integer', description: 'How urgent', 'x-mcp-header': 'Priority' },
          query: { type: 'string', description: 'What to run' },
        },
        required: ['region'],
      },
      side_effect_class: 'read',
    },
    async run(args) {
      return { content: [text(`region=${String(args.region)}`)] };
    },
  },
];

function describeAnswer(answer: Record<string, unknown>): string {
  return `action=${String(answer.action)}, content=${JSON.stringify(answer.content ?? {})}`;
}

/** Fixtures that need the MCP client mid-call: sampling and elicitation, relayed by the gateway. */
export const CONFORMANCE_CLIENT_SKILLS: readonly Skill[] = [
  {
    // Declares what it needs: a 2026-07-28 client without sampling gets -32021 before the agent is asked.
    definition: {
      name: 'test_missing_capability',
      description: 'Needs the client to sample an LLM (refused with -32021 when the client did not declare sampling)',
      input_schema: NO_ARGUMENTS,
      side_effect_class: 'read',
      required_client_capabilities: { sampling: {} },
    },
    async run(_args, ctx) {
      const answer = await ctx.ask('sampling/createMessage', {
        messages: [{ role: 'user', content: { type: 'text', text: 'Say hello' } }],
        maxTokens: 20,
      });
      const content = answer.content as { type?: string; text?: string } | undefined;
      return { content: [text(`LLM response: ${content?.type === 'text' ? content.text : 'No text response'}`)] };
    },
  },
  {
    definition: {
      name: 'test_streaming_elicitation',
      description:
        'Asks the user through the client (2026-07-28: as an input-required result, never a request on the stream)',
      input_schema: NO_ARGUMENTS,
      side_effect_class: 'read',
      required_client_capabilities: { elicitation: {} },
    },
    async run(_args, ctx) {
      const answer = await ctx.ask('elicitation/create', {
        message: 'Please confirm',
        requestedSchema: { type: 'object', properties: { confirmed: { type: 'boolean' } }, required: ['confirmed'] },
      });
      return { content: [text(`Elicitation completed: ${describeAnswer(answer)}`)] };
    },
  },
  {
    definition: {
      name: 'test_sampling',
      description: 'Asks the client to sample an LLM',
      input_schema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
      side_effect_class: 'read',
    },
    async run(args, ctx) {
      const answer = await ctx.ask('sampling/createMessage', {
        messages: [{ role: 'user', content: { type: 'text', text: String(args.prompt) } }],
        maxTokens: 100,
      });
      const content = answer.content as { type?: string; text?: string } | undefined;
      return { content: [text(`LLM response: ${content?.type === 'text' ? content.text : 'No text response'}`)] };
    },
  },
  {
    definition: {
      name: 'test_elicitation',
      description: 'Asks the user for information through the client',
      input_schema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
      side_effect_class: 'read',
    },
    async run(args, ctx) {
      const answer = await ctx.ask('elicitation/create', {
        message: String(args.message),
        requestedSchema: {
          type: 'object',
          properties: {
            username: { type: 'string', description: "User's response" },
            email: { type: 'string', description: "User's email address" },
          },
          required: ['username', 'email'],
        },
      });
      return { content: [text(`User response: ${describeAnswer(answer)}`)] };
    },
  },
  fixture('test_elicitation_sep1034_defaults', 'Elicitation with default values', async (_args, ctx) => {
    const answer = await ctx.ask('elicitation/create', {
      message: 'Please review and update the form fields with defaults',
      requestedSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'User name', default: 'John Doe' },
          age: { type: 'integer', description: 'User age', default: 30 },
          score: { type: 'number', description: 'User score', default: 95.5 },
          status: {
            type: 'string',
            description: 'User status',
            enum: ['active', 'inactive', 'pending'],
            default: 'active',
          },
          verified: { type: 'boolean', description: 'Verification status', default: true },
        },
      },
    });
    return { content: [text(`Elicitation completed: ${describeAnswer(answer)}`)] };
  }),
  fixture('test_elicitation_sep1330_enums', 'Elicitation with every kind of enum', async (_args, ctx) => {
    const answer = await ctx.ask('elicitation/create', {
      message: 'Please select options from the enum fields',
      requestedSchema: {
        type: 'object',
        properties: {
          untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
          titledSingle: {
            type: 'string',
            description: 'Select one option with titles',
            oneOf: [
              { const: 'value1', title: 'First Option' },
              { const: 'value2', title: 'Second Option' },
              { const: 'value3', title: 'Third Option' },
            ],
          },
          legacyEnum: {
            type: 'string',
            description: 'Select one option (legacy)',
            enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Option One', 'Option Two', 'Option Three'],
          },
          untitledMulti: {
            type: 'array',
            description: 'Select multiple options',
            minItems: 1,
            maxItems: 3,
            items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          },
          titledMulti: {
            type: 'array',
            description: 'Select multiple options with titles',
            minItems: 1,
            maxItems: 3,
            items: {
              anyOf: [
                { const: 'value1', title: 'First Choice' },
                { const: 'value2', title: 'Second Choice' },
                { const: 'value3', title: 'Third Choice' },
              ],
            },
          },
        },
        required: [],
      },
    });
    return { content: [text(`Elicitation completed: ${describeAnswer(answer)}`)] };
  }),
];

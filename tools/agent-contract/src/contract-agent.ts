/*
 * The TypeScript SDK's contract agent: the skills every SDK's contract agent
 * has (../README.md), written as a user of @mcpgw/agent-sdk would write them.
 * The contract suite (../test/agent-contract.e2e.spec.ts) starts it as a process.
 */
import { createAgent, defineSkill, SkillStoppedError, ToolError } from '@mcpgw/agent-sdk';
import { createHash } from 'node:crypto';
import { appendFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

const markers = process.env.CONTRACT_MARKERS ?? '.';
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** A marker file, written whole. */
function mark(name: string, content: string): void {
  const path = join(markers, name);
  writeFileSync(`${path}.tmp`, content);
  renameSync(`${path}.tmp`, path);
}

const echo = defineSkill<{ text: string }>({
  name: 'echo',
  description: 'Returns its text',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  run: async ({ text }) => text,
});

const image = defineSkill({
  name: 'image',
  description: 'Returns a 1x1 PNG and a caption',
  inputSchema: { type: 'object', properties: {} },
  run: async () => [
    { type: 'image', data: PIXEL, mimeType: 'image/png' },
    { type: 'text', text: 'a pixel' },
  ],
});

const add = defineSkill<{ a: number; b: number }>({
  name: 'add',
  description: 'Adds two numbers',
  inputSchema: {
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
  },
  outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
  run: async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structured: { sum: a + b } }),
});

const fail = defineSkill({
  name: 'fail',
  description: 'Fails, as a tool',
  inputSchema: { type: 'object', properties: {} },
  run: async () => {
    throw new ToolError('this tool fails on purpose');
  },
});

const report = defineSkill<{ steps: number }>({
  name: 'report',
  description: 'Reports progress and logs, step by step',
  inputSchema: { type: 'object', properties: { steps: { type: 'integer', minimum: 1 } }, required: ['steps'] },
  run: async ({ steps }, ctx) => {
    for (let step = 1; step <= steps; step++) {
      ctx.progress(step, steps, `step ${step}`);
      ctx.log('info', { step, call_id: ctx.callId });
      await delay(20);
    }
    return `reported ${steps}`;
  },
});

const askName = defineSkill({
  name: 'ask_name',
  description: 'Asks the user for a name',
  inputSchema: { type: 'object', properties: {} },
  requiredClientCapabilities: { elicitation: {} },
  run: async (_args, ctx) => {
    const answer = await ctx.ask(
      'elicitation/create',
      {
        message: 'Your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      },
      'name',
    );
    const content = answer.content as { name?: string } | undefined;
    return answer.action === 'accept' ? `hello ${content?.name}` : `no name (${String(answer.action)})`;
  },
});

const wait = defineSkill<{ key: string; ms: number }>({
  name: 'wait',
  description: 'Waits, or stops when the call is stopped',
  inputSchema: {
    type: 'object',
    properties: { key: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' }, ms: { type: 'integer', minimum: 0 } },
    required: ['key', 'ms'],
  },
  run: async ({ key, ms }, ctx) => {
    appendFileSync(join(markers, `started-${key}`), `${process.pid}\n`);
    try {
      await delay(ms, undefined, { signal: ctx.signal });
    } catch (error) {
      const reason: unknown = ctx.signal.reason;
      if (reason instanceof SkillStoppedError) mark(`stopped-${key}`, reason.why);
      throw error;
    }
    return `waited ${ms} in ${process.pid}`;
  },
});

const attachment = defineSkill({
  name: 'attachment',
  description: 'Downloads its attachments and says what they hold',
  inputSchema: {
    type: 'object',
    properties: {
      attachments: {
        type: 'array',
        items: {
          type: 'object',
          properties: { file_id: { type: 'string' }, filename: { type: 'string' }, content_type: { type: 'string' } },
          required: ['file_id'],
        },
      },
    },
    required: ['attachments'],
  },
  run: async (_args, ctx) => {
    const files = [];
    for (const file of ctx.attachments) {
      const response = await file.download();
      if (!response.ok) throw new ToolError(`downloading ${file.name} failed: HTTP ${response.status}`);
      const bytes = Buffer.from(await response.arrayBuffer());
      files.push({ name: file.name, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
    }
    return { content: [{ type: 'text', text: JSON.stringify({ files }) }], structured: { files } };
  },
});

const agent = createAgent({
  agentId: process.env.AGENT_ID ?? 'contract-agent',
  skills: [echo, image, add, fail, report, askName, wait, attachment],
});
// Conversational messages (A2A messages that name no skill): what was said, and how many the conversation holds.
agent.onMessage(async (message, ctx) => {
  const earlier = (await ctx.history()).filter(({ envelope: m }) => {
    return m.type === 'chat_message' && m.text !== undefined && !m.tool_call && m.id !== ctx.message.id;
  });
  const data = message.data ? ` ${JSON.stringify(message.data)}` : '';
  return `heard ${message.text}${data} (${earlier.length + 1} in this conversation)`;
});
agent.start().then(
  () => console.log('contract agent ready'),
  (error: Error) => {
    console.error(`contract agent cannot start: ${error.message}`);
    process.exit(1);
  },
);

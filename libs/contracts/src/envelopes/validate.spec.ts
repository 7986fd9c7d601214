import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RegisterAgentRequest } from '../skills/skill-definition';
import { AgentReply } from './agent-reply';
import { CancelRequest, InputRequestEvent, LogEvent, PollEvent, ProgressEvent } from './call-events';
import { ChatMessage } from './chat-message';
import { validateByDecorators } from './decorated';
import { parseAs, parseEnvelope } from './validate';

const chat = () => ({
  type: 'chat_message',
  id: randomUUID(),
  agent_id: 'demo-agent',
  sender: { kind: 'mcp_client', id: 'key1' },
  created_at: new Date().toISOString(),
  tool_call: { name: 'echo', arguments: { text: 'hi' } },
});

const reply = () => ({
  type: 'agent_reply',
  id: randomUUID(),
  channel_id: randomUUID(),
  agent_id: 'demo-agent',
  in_reply_to: randomUUID(),
  created_at: new Date().toISOString(),
  content: [{ type: 'text', text: 'hi' }],
});

describe('envelope contracts', () => {
  it('accepts a well-formed chat_message and agent_reply', () => {
    expect(parseEnvelope(chat())).toMatchObject({ ok: true, value: { type: 'chat_message' } });
    expect(parseEnvelope(reply())).toMatchObject({ ok: true, value: { type: 'agent_reply' } });
  });

  it.each([
    ['no type', { ...chat(), type: undefined }, 'type must be'],
    ['a non-UUID id', { ...chat(), id: '42' }, 'id'],
    ['an agent id with a space', { ...chat(), agent_id: 'a b' }, 'agent_id'],
    ['an unknown sender kind', { ...chat(), sender: { kind: 'robot', id: 'x' } }, 'sender.kind'],
    [
      'tool arguments that are not an object',
      { ...chat(), tool_call: { name: 'x', arguments: 'no' } },
      'tool_call.arguments',
    ],
    ['a reply without in_reply_to', { ...reply(), in_reply_to: undefined }, 'in_reply_to'],
    ['content of an unknown type', { ...reply(), content: [{ type: 'video' }] }, 'content.0.type'],
    [
      'image content without data',
      { ...reply(), content: [{ type: 'image', mimeType: 'image/png' }] },
      'content.0.data',
    ],
  ])('refuses %s, naming the field', (_what, plain, field) => {
    const parsed = parseEnvelope(plain);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? [] : parsed.errors.join('\n')).toContain(field);
  });

  it.each([null, 42, 'text', [chat()]])('refuses %j without throwing', (plain) => {
    expect(parseEnvelope(plain).ok).toBe(false);
  });

  it('passes every MCP content type through', () => {
    const parsed = parseEnvelope({
      ...reply(),
      content: [
        { type: 'text', text: 't' },
        { type: 'image', data: 'AA==', mimeType: 'image/png' },
        { type: 'audio', data: 'AA==', mimeType: 'audio/wav' },
        { type: 'resource_link', uri: 'file:///a', name: 'a' },
        { type: 'resource', resource: { uri: 'file:///b', text: 'b' } },
      ],
    });
    expect(parsed.ok).toBe(true);
  });
});

describe('compiled envelope schemas', () => {
  it('returns the message itself, extra properties included', () => {
    const plain = { ...chat(), extra: 1, sender: { kind: 'user', id: 'u', extra: 2 } };
    const parsed = parseEnvelope(plain);
    expect(parsed.ok && parsed.value).toBe(plain);
  });

  it('takes null for an optional field, as @IsOptional() does', () => {
    expect(parseEnvelope({ ...chat(), channel_id: null, text: null, meta: null }).ok).toBe(true);
    expect(
      parseEnvelope({ ...reply(), is_error: null, content: [{ type: 'text', text: 'a', mimeType: null }] }).ok,
    ).toBe(true);
  });

  it('requires the sender, and nested objects that are objects', () => {
    expect(parseEnvelope({ ...chat(), sender: undefined })).toEqual({
      ok: false,
      errors: ['sender: sender is required'],
    });
    expect(parseEnvelope({ ...chat(), sender: [] })).toEqual({
      ok: false,
      errors: ['sender: sender must be an object'],
    });
    expect(parseEnvelope({ ...chat(), tool_call: [] })).toEqual({
      ok: false,
      errors: ['tool_call: tool_call must be an object'],
    });
  });

  it('reports every error with its path', () => {
    const parsed = parseEnvelope({ ...chat(), id: 'x', created_at: 'yesterday', sender: { kind: 'robot' } });
    expect(parsed.ok ? [] : [...parsed.errors].sort()).toEqual([
      'created_at: created_at must be a valid ISO 8601 date string',
      'id: id must be a UUID',
      'sender.id: id is required',
      'sender.kind: kind must be one of the following values: mcp_client, agent, user',
    ]);
    expect(parseEnvelope({ ...reply(), content: [{ type: 'text', text: 'a' }, 'b'] })).toEqual({
      ok: false,
      errors: ['content.1: each value in content must be an object'],
    });
    expect(parseEnvelope({ ...reply(), content: [{ type: 'text' }] })).toEqual({
      ok: false,
      errors: ['content.0.text is required for text'],
    });
  });

  it('caps content at 1000 items', () => {
    const content = (n: number) => Array.from({ length: n }, () => ({ type: 'text', text: 'a' }));
    expect(parseEnvelope({ ...reply(), content: content(1000) }).ok).toBe(true);
    expect(parseEnvelope({ ...reply(), content: content(1001) })).toEqual({
      ok: false,
      errors: ['content: content must contain no more than 1000 elements'],
    });
  });

  it.each([
    ['2024-05-01T10:20:30.123Z', true],
    ['2024-05-01T10:20:30+02:00', true],
    ['2024-05-01T10:20', true],
    ['2024-05-01', true],
    ['2024-02-30', true],
    ['2024-05-01T10:20:60Z', false],
    ['1 May 2024', false],
  ])('reads created_at %s as @IsISO8601() does (%s)', (created_at, ok) => {
    expect(parseEnvelope({ ...chat(), created_at }).ok).toBe(ok);
  });

  it.each([
    ['0b6f3c1e-8d6a-4f0e-9a51-3c9c1f0d2b7a', true],
    ['0B6F3C1E-8D6A-7F0E-BA51-3C9C1F0D2B7A', true],
    ['00000000-0000-0000-0000-000000000000', true],
    ['0b6f3c1e-8d6a-0f0e-9a51-3c9c1f0d2b7a', false],
    ['0b6f3c1e-8d6a-4f0e-7a51-3c9c1f0d2b7a', false],
    ['urn:uuid:0b6f3c1e-8d6a-4f0e-9a51-3c9c1f0d2b7a', false],
  ])('reads id %s as @IsUUID() does (%s)', (id, ok) => {
    expect(parseEnvelope({ ...chat(), id }).ok).toBe(ok);
  });

  /** The schemas against the classes' decorators, field by field, on values of every kind. */
  const U = '0b6f3c1e-8d6a-4f0e-9a51-3c9c1f0d2b7a';
  const cases: [string, new () => object, Record<string, unknown>, string[]][] = [
    [
      'ChatMessage',
      ChatMessage,
      { type: 'chat_message', id: U, agent_id: 'a', sender: { kind: 'user', id: 'x' }, created_at: '2024' },
      ['channel_id', 'text', 'data', 'tool_call', 'call_id', 'resource_read', 'prompt_get', 'attachments', 'meta'],
    ],
    [
      'AgentReply',
      AgentReply,
      { type: 'agent_reply', id: U, channel_id: U, agent_id: 'a', in_reply_to: U, created_at: '2024', content: [] },
      ['structured_content', 'is_error', 'meta'],
    ],
    ['ProgressEvent', ProgressEvent, { type: 'progress', in_reply_to: U, progress: 1 }, ['total', 'message']],
    ['LogEvent', LogEvent, { type: 'log', in_reply_to: U, level: 'info', data: 1 }, ['logger']],
    [
      'InputRequestEvent',
      InputRequestEvent,
      { type: 'input_request', in_reply_to: U, key: 'k', method: 'roots/list', params: {} },
      [],
    ],
    ['PollEvent', PollEvent, { type: 'poll', in_reply_to: U }, []],
    ['CancelRequest', CancelRequest, { type: 'cancel', message_id: U }, ['reason']],
  ];
  const values: unknown[] = [
    undefined,
    null,
    0,
    1.5,
    true,
    '',
    'x',
    'a'.repeat(65),
    'a'.repeat(129),
    'a'.repeat(201),
    'a'.repeat(1001),
    'a'.repeat(2049),
    [],
    {},
    { a: 1 },
    U,
    '2024-01-01T10:00',
    'chat_message',
    'agent_reply',
    'progress',
    'log',
    'input_request',
    'poll',
    'cancel',
    'user',
    'debug',
    'elicitation/create',
    'text',
    'image',
    'a b',
    'call_0123456789abcdef0123456789abcdef',
    'user_7:q3_summary',
    'tab\tinside',
    [{ type: 'text', text: 'x' }],
    [{ type: 'bogus' }],
    [{ type: 'text', text: 5 }],
    [null],
    [{ kind: 'file', file: { uri: 'u' } }],
    [{ kind: 'file', file: { uri: 'u', name: 'n', mimeType: 'm' }, metadata: { file_id: 'f', size: 1 } }],
    [{ kind: 'file', file: { uri: 5 } }],
    [{ kind: 'file', file: { name: 'n' } }],
    [{ kind: 'file', file: { uri: 'u', name: 'a'.repeat(256) } }],
    [{ kind: 'file', file: { uri: 'u' }, metadata: 5 }],
    [{ kind: 'file', file: null }],
    [{ kind: 'file', file_id: 'f', uri: 'u' }],
    [{ kind: 'file' }],
    { kind: 'agent', id: 'x' },
    { kind: 'agent' },
    { name: 'n', arguments: {} },
    { name: 'n', arguments: [] },
    { uri: 'u' },
    { uri: 5 },
    { kind: 'agent', id: 'a'.repeat(201) },
    { name: 'a'.repeat(129), arguments: {} },
    { name: 'a'.repeat(201), arguments: {} },
    { uri: 'a'.repeat(2049) },
  ];
  /** Where class-validator's @ValidateNested() lets through what the type forbids: an array, or nothing, for one object. */
  const quirk = (field: string, value: unknown) =>
    ['sender', 'tool_call', 'resource_read', 'prompt_get'].includes(field) &&
    (Array.isArray(value) || (field === 'sender' && value === undefined));

  it.each(cases)('agrees with the decorators of %s', (_name, cls, base, optional) => {
    const disagreements: string[] = [];
    for (const field of [...Object.keys(base), ...optional]) {
      for (const value of values) {
        if (quirk(field, value)) continue;
        const plain = { ...base, [field]: value };
        const compiled = parseAs(cls, plain).ok;
        if (compiled !== validateByDecorators(cls, plain).ok)
          disagreements.push(`${field}=${JSON.stringify(value)}: ${compiled}`);
      }
    }
    expect(disagreements).toEqual([]);
  });
});

describe('skill registration contract', () => {
  it('refuses a tool name MCP would not accept', () => {
    const parsed = parseAs(RegisterAgentRequest, {
      workspace_id: 'demo',
      agent_id: 'a',
      pod_id: 'p',
      skills: [{ name: 'has space', description: 'd', input_schema: {} }],
    });
    expect(parsed.ok).toBe(false);
  });
});

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RegisterAgentRequest } from '../skills/skill-definition';
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
    ['tool arguments that are not an object', { ...chat(), tool_call: { name: 'x', arguments: 'no' } }, 'tool_call.arguments'],
    ['a reply without in_reply_to', { ...reply(), in_reply_to: undefined }, 'in_reply_to'],
    ['content of an unknown type', { ...reply(), content: [{ type: 'video' }] }, 'content.0.type'],
    ['image content without data', { ...reply(), content: [{ type: 'image', mimeType: 'image/png' }] }, 'content.0.data'],
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

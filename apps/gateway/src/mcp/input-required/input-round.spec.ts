import type { InputResponse } from '@mcpgw/contracts';
import { describe, expect, it } from 'vitest';
import { InputRound, MISSING_CAPABILITY, capabilityFor, declares } from './input-round';

const MESSAGE = '11111111-1111-4111-8111-111111111111';
const CHANNEL = '22222222-2222-4222-8222-222222222222';
const question = (key: string, method: 'elicitation/create' | 'sampling/createMessage' | 'roots/list') => ({
  type: 'input_request' as const,
  in_reply_to: MESSAGE,
  channel_id: CHANNEL,
  key,
  method,
  params: {},
});

describe('the capability a question needs', () => {
  it('is sampling, roots, or elicitation in form (default) or url mode', () => {
    expect(capabilityFor('sampling/createMessage', {})).toBe('sampling');
    expect(capabilityFor('roots/list', {})).toBe('roots');
    expect(capabilityFor('elicitation/create', {})).toBe('elicitation.form');
    expect(capabilityFor('elicitation/create', { mode: 'url' })).toBe('elicitation.url');
  });

  it('is declared by an object; `elicitation: {}` is form mode only', () => {
    expect(declares({ sampling: {} }, 'sampling')).toBe(true);
    expect(declares({ sampling: true }, 'sampling')).toBe(false);
    expect(declares({}, 'roots')).toBe(false);
    expect(declares({ elicitation: {} }, 'elicitation.form')).toBe(true);
    expect(declares({ elicitation: {} }, 'elicitation.url')).toBe(false);
    expect(declares({ elicitation: { url: {} } }, 'elicitation.form')).toBe(false);
    expect(declares({ elicitation: { url: {}, form: {} } }, 'elicitation.url')).toBe(true);
  });
});

describe('InputRound', () => {
  const round = (capabilities: Record<string, unknown>, supplied: Record<string, Record<string, unknown>> = {}) => {
    const answers: InputResponse[] = [];
    const r = new InputRound({
      agentId: 'demo-agent',
      capabilities,
      supplied,
      answer: (_message, response) => void answers.push(response),
    });
    return { r, answers };
  };

  it('keeps what the client can answer, refuses to the agent what it cannot, and settles', async () => {
    const { r, answers } = round({ sampling: {} });
    r.onEvent(question('user_name', 'elicitation/create'));
    r.onEvent(question('greeting', 'sampling/createMessage'));
    await r.settled;
    expect(Object.keys(r.inputRequests())).toEqual(['greeting']);
    expect(answers).toEqual([
      { key: 'user_name', error: { code: MISSING_CAPABILITY, message: expect.stringContaining('elicitation') } },
    ]);
    expect([r.messageId, r.channelId]).toEqual([MESSAGE, CHANNEL]);
  });

  it('answers at once what the request already answered', () => {
    const { r, answers } = round({ elicitation: {} }, { user_name: { action: 'accept', content: { name: 'A' } } });
    r.onEvent(question('user_name', 'elicitation/create'));
    expect(answers).toEqual([{ key: 'user_name', result: { action: 'accept', content: { name: 'A' } } }]);
    expect(r.open.size).toBe(0);
    r.stop();
  });
});

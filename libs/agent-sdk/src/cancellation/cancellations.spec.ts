import type { BusClient } from '@mcpgw/bus/core';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Cancellations, SkillStoppedError } from './cancellations';

/** The bus as Cancellations sees it: one subscription, whose handler the test calls as a cancel arriving. */
function cancellations() {
  let hear: (event: { payload: { message_id: string; reason?: string } }) => void = () => undefined;
  const bus = { subscribe: (_subject: unknown, handler: typeof hear) => ((hear = handler), { unsubscribe() {} }) };
  const quiet = { log() {}, warn() {}, error() {} };
  const c = new Cancellations(bus as unknown as BusClient, 'agent-a', quiet as never);
  c.start();
  return { c, cancel: (messageId: string) => hear({ payload: { message_id: messageId } }) };
}

const Original = globalThis.AbortController;
let made = 0;
class CountedAbortController extends Original {
  constructor() {
    super();
    made++;
  }
}

describe('a tracked call', () => {
  afterEach(() => {
    globalThis.AbortController = Original;
  });

  it('makes no AbortController for a skill that never reads its signal', () => {
    globalThis.AbortController = CountedAbortController;
    made = 0;
    const { c } = cancellations();
    const call = c.track({ id: randomUUID() });
    expect(call.aborted).toBe(false);
    expect(call.stopped).toBe(false);
    call.done();
    expect(made).toBe(0);
  });

  it('aborts a signal read before the cancel, with the reason', () => {
    const { c, cancel } = cancellations();
    const id = randomUUID();
    const call = c.track({ id });
    const signal = call.signal;
    let heard: unknown;
    signal.addEventListener('abort', () => (heard = signal.reason));
    cancel(id);
    expect(signal.aborted).toBe(true);
    expect(heard).toBeInstanceOf(SkillStoppedError);
    expect(call.stopped).toBe(true);
    expect(call.reason).toBe(signal.reason);
  });

  it('hands a signal read after the cancel already aborted, with the same reason', () => {
    const { c, cancel } = cancellations();
    const id = randomUUID();
    const call = c.track({ id });
    cancel(id);
    expect(call.aborted).toBe(true);
    expect(call.signal.aborted).toBe(true);
    expect(call.signal.reason).toBe(call.reason);
    expect((call.reason as SkillStoppedError).why).toBe('cancelled');
  });

  it('is stopped at its deadline, and by a cancel that came before it', async () => {
    const { c, cancel } = cancellations();
    const late = c.track({ id: randomUUID(), meta: { timeout_ms: 1 } } as never);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(late.aborted).toBe(true);
    expect((late.reason as SkillStoppedError).why).toBe('deadline');
    const early = randomUUID();
    cancel(early);
    expect(c.track({ id: early }).signal.aborted).toBe(true);
  });
});

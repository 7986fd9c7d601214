import type { DeliveryHook } from '@mcpgw/agent-sdk';
import type { InboxConsumerState } from '@mcpgw/bus';
import { hopTimer } from '@mcpgw/observability';
import { Counter, Gauge, type Registry } from 'prom-client';

/** The consumer's counts on /metrics are asked of JetStream at most this often (one API request each). */
const CONSUMER_STATE_MAX_AGE_MS = 5_000;

/**
 * The pod's inbox on /metrics: hop `pod` (message received to reply sent),
 * redeliveries, and the consumer's counts as JetStream keeps them.
 */
export function inboxMetrics(
  registry: Registry,
  agent: string,
  consumerState: () => Promise<InboxConsumerState | undefined>,
): { delivered: DeliveryHook } {
  const hop = hopTimer(registry, 'pod');
  const redeliveries = new Counter({
    name: 'mcpgw_inbox_redeliveries_total',
    help: 'Inbox messages this pod received again (JetStream redelivered them: a pod died, an ack wait ran out, a nak)',
    labelNames: ['agent'],
    registers: [registry],
  });
  redeliveries.inc({ agent }, 0);
  let cached: { at: number; state: Promise<InboxConsumerState | undefined> } | undefined;
  const counts = () => {
    const now = Date.now();
    if (!cached || now - cached.at > CONSUMER_STATE_MAX_AGE_MS) cached = { at: now, state: consumerState() };
    return cached.state;
  };
  new Gauge({
    name: 'mcpgw_inbox_consumer_messages',
    help: "The agent's inbox consumer as JetStream counts it (consumer info, at most every 5 s): pending (not yet delivered), ack_pending (delivered, not acked), redelivered (delivered more than once, not acked)",
    labelNames: ['agent', 'state'],
    registers: [registry],
    async collect() {
      const state = await counts();
      if (!state) return;
      this.set({ agent, state: 'pending' }, state.pending);
      this.set({ agent, state: 'ack_pending' }, state.ackPending);
      this.set({ agent, state: 'redelivered' }, state.redelivered);
    },
  });
  return {
    delivered: ({ redelivered }) => {
      if (redelivered) redeliveries.inc({ agent });
      return hop();
    },
  };
}

import { Inject, Injectable } from '@nestjs/common';
import { InboxPublisher, type InboxStreamState } from '@mcpgw/bus';
import { METRICS_REGISTRY } from '@mcpgw/observability';
import { Gauge, type Registry } from 'prom-client';

/** JetStream is asked at most this often (two API requests), whatever the scrape rate. */
const STATE_MAX_AGE_MS = 5_000;

/**
 * The agent inbox stream on /metrics, as JetStream reports it: replicas asked
 * for and current, whether it has a leader (the `/ready` check `jetstream` as
 * numbers), and each agent's consumer: pending, ack pending, pull requests
 * waiting. Every replica reports the same figures (they are the stream's);
 * unlike the pod's own `mcpgw_inbox_consumer_messages`, these stay when every
 * pod of the agent is gone, which is when they matter.
 */
@Injectable()
export class InboxStreamMetrics {
  private cached?: { at: number; state: Promise<InboxStreamState | undefined> };

  constructor(inboxes: InboxPublisher, @Inject(METRICS_REGISTRY) registry: Registry) {
    const state = () => {
      const now = Date.now();
      if (!this.cached || now - this.cached.at > STATE_MAX_AGE_MS) this.cached = { at: now, state: inboxes.state() };
      return this.cached.state;
    };
    const gauge = (name: string, help: string, labelNames: string[], set: (g: Gauge, s: InboxStreamState) => void) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers: [registry],
        async collect() {
          const current = await state();
          this.reset();
          if (current) set(this, current);
        },
      });
    gauge(
      'mcpgw_jetstream_stream_replicas',
      'copies of the agent inbox stream: asked for (configured), and holding it now (current: the leader and the current, online replicas)',
      ['stream', 'state'],
      (g, s) => {
        g.set({ stream: s.stream, state: 'configured' }, s.replicas);
        g.set({ stream: s.stream, state: 'current' }, s.current);
      },
    );
    gauge(
      'mcpgw_jetstream_stream_leader',
      '1 while the agent inbox stream has a leader (takes writes), else 0',
      ['stream'],
      (g, s) => g.set({ stream: s.stream }, s.leader ? 1 : 0),
    );
    gauge(
      'mcpgw_inbox_pending_messages',
      "each agent's inbox consumer, as JetStream counts it: pending (not yet delivered), ack_pending (delivered, not acked), waiting (pods' pull requests open)",
      ['agent', 'state'],
      (g, s) => {
        for (const c of s.consumers) {
          g.set({ agent: c.agent, state: 'pending' }, c.pending);
          g.set({ agent: c.agent, state: 'ack_pending' }, c.ackPending);
          g.set({ agent: c.agent, state: 'waiting' }, c.waiting);
        }
      },
    );
  }
}

import { Gauge, type Registry } from 'prom-client';
import type { Backlog } from './webhook-deliveries.store';

/**
 * The dispatcher's backlog as gauges, read with one statement at each scrape
 * (none while no webhook exists): outcomes not yet fanned out, deliveries
 * pending and the age of the oldest (the delivery lag), failing and disabled
 * endpoints. Every replica reports the same figures: they are the database's.
 */
export function backlogGauges(registry: Registry, read: () => Promise<Backlog> | undefined): void {
  let last: Promise<Backlog | undefined> | undefined;
  /** One read per scrape, shared by the gauges (each collects on its own). */
  const current = () =>
    (last ??= Promise.resolve(read())
      .catch(() => undefined)
      .finally(() => setImmediate(() => (last = undefined))));
  const gauge = (name: string, help: string, labelNames: string[], set: (g: Gauge, b: Backlog) => void) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        const backlog = await current();
        this.reset();
        if (backlog) set(this, backlog);
      },
    });
  gauge(
    'mcpgw_webhook_backlog',
    'webhook outcomes not yet fanned out (events) and deliveries pending',
    ['kind'],
    (g, b) => {
      g.set({ kind: 'events' }, b.events);
      g.set({ kind: 'pending' }, b.pending);
    },
  );
  gauge(
    'mcpgw_webhook_oldest_pending_seconds',
    'age of the oldest pending webhook delivery (the delivery lag)',
    [],
    (g, b) => g.set(b.oldestPendingSeconds),
  );
  gauge('mcpgw_webhook_endpoints', 'webhook endpoints failing (backing off) or disabled', ['state'], (g, b) => {
    g.set({ state: 'failing' }, b.failingEndpoints);
    g.set({ state: 'disabled' }, b.disabledEndpoints);
  });
}

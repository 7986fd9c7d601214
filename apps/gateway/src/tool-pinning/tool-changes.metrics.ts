import { Gauge, type Registry } from 'prom-client';

/**
 * `mcpgw_tool_changes_pending{agent}`: tool changes waiting for an operator,
 * read with one statement at each scrape. Every replica reports the same
 * figures (they are the database's): alert on `max by (agent)`.
 */
export function pendingChangesGauge(registry: Registry, read: () => Promise<Map<string, number>>): void {
  new Gauge({
    name: 'mcpgw_tool_changes_pending',
    help: 'tool-definition changes waiting for an operator to approve or reject them, per agent',
    labelNames: ['agent'],
    registers: [registry],
    async collect() {
      const pending = await read().catch(() => undefined);
      this.reset();
      for (const [agent, n] of pending ?? []) this.set({ agent }, n);
    },
  });
}

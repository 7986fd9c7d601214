import type { NatsConnection } from 'nats';

/** The connection events counted on /metrics; nats.js's other status events are not. */
const COUNTED = ['disconnect', 'reconnect'] as const;
type CountedEvent = (typeof COUNTED)[number];

/** Whether a connection is up, as its status events tell. */
export interface ConnectionState {
  readonly connected: boolean;
}

/**
 * Counts of NATS connection events of this process (`disconnect`, `reconnect`),
 * for `mcpgw_nats_connection_events_total`, and whether the connection is up
 * now (a disconnect until its reconnect), for `/ready`. One per process, as the
 * bus meter: an app holds one connection.
 */
export class ConnectionEvents implements ConnectionState {
  private readonly counts = new Map<CountedEvent, number>(COUNTED.map((event) => [event, 0]));
  connected = true;

  /** One status event; returns the counted event it was, if any. */
  record(type: string): CountedEvent | undefined {
    if (type === 'disconnect') this.connected = false;
    else if (type === 'reconnect') this.connected = true;
    else return undefined;
    this.counts.set(type, (this.counts.get(type) ?? 0) + 1);
    return type;
  }

  /** Follow a connection's status events until it closes. */
  async follow(
    status: AsyncIterable<{ type: string; data?: unknown }>,
    onEvent?: (type: CountedEvent, data: unknown) => void,
  ): Promise<void> {
    for await (const event of status) {
      const counted = this.record(event.type);
      if (counted) onEvent?.(counted, event.data);
    }
  }

  *entries(): Iterable<[{ event: string }, number]> {
    for (const [event, value] of this.counts) yield [{ event }, value];
  }
}

const byConnection = new WeakMap<NatsConnection, ConnectionEvents>();
const processEvents: ConnectionEvents[] = [];

/** The events of this connection (made, and following its status, on first use). */
export function connectionEvents(
  nc: NatsConnection,
  onEvent?: (type: string, data: unknown) => void,
): ConnectionEvents {
  let events = byConnection.get(nc);
  if (!events) {
    events = new ConnectionEvents();
    byConnection.set(nc, events);
    processEvents.push(events);
    void events.follow(nc.status(), onEvent).catch(() => undefined);
  }
  return events;
}

export function connectionState(nc: NatsConnection): ConnectionState {
  return connectionEvents(nc);
}

/** The Prometheus counter `mcpgw_nats_connection_events_total`: disconnects and reconnects of this process. */
export const natsConnectionEventsMetric = {
  name: 'mcpgw_nats_connection_events_total',
  help: 'NATS connection events of this process: disconnect, reconnect (what was published in between is lost)',
  labelNames: ['event'] as const,
  *read(): Iterable<[{ event: string }, number]> {
    const totals = new Map<string, number>(COUNTED.map((event) => [event, 0]));
    for (const events of processEvents)
      for (const [{ event }, value] of events.entries()) totals.set(event, (totals.get(event) ?? 0) + value);
    for (const [event, value] of totals) yield [{ event }, value];
  },
};

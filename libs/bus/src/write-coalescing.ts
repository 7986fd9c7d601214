import type { NatsConnection } from 'nats';

interface ProtocolHandler {
  flushPending(): void;
}

/**
 * Write once per turn of the event loop, not once per microtask checkpoint.
 *
 * nats.js writes its outbound buffer to the socket at the end of the microtask
 * queue after a publish. Node drains that queue after every I/O callback, so a
 * service handling 64 requests that arrived together writes 64 times. Each
 * write is a system call that also wakes nats-server; on a busy machine they
 * dominate the profile of every app. Deferring the write to `setImmediate`
 * sends everything published during one loop turn in one write, at the cost
 * of at most one turn of latency. Tied to nats 2.29 (pinned).
 */
export function coalesceWrites(nc: NatsConnection): void {
  const protocol = (nc as unknown as { protocol?: ProtocolHandler }).protocol;
  if (!protocol || typeof protocol.flushPending !== 'function') {
    throw new Error('nats client internals changed: cannot coalesce writes');
  }
  const flushNow = protocol.flushPending.bind(protocol);
  let scheduled = false;
  protocol.flushPending = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      flushNow();
    });
  };
}

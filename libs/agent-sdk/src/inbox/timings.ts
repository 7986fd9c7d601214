import { BUS_REQUEST_TIMEOUT_MS } from '@mcpgw/contracts';

/**
 * How long one pull waits for messages: 5 s, and no more than half the ack wait
 * (but the 1 s nats.js requires). An instance killed outright leaves its pull
 * behind at the server until it expires; nats-server 2.9 offers a redelivery
 * that comes due to that dead pull first and then delivers it as a first
 * delivery (count 1), so the message would escape the delivery limit. Expired
 * by then, a dead pull takes nothing.
 */
export function fetchExpiresMs(ackWaitMs: number): number {
  return Math.max(1_000, Math.min(5_000, Math.floor(ackWaitMs / 2)));
}

/**
 * How long a first delivery's reply waits for the delivering replica's word
 * that it is stored: the bus timeout, and no more than half the ack wait, so
 * that a lost reply is stored again before JetStream could hand the message to
 * another instance (a new consumer leader, after a NATS server's loss, may
 * redeliver what was delivered an ack wait ago, heartbeats or not).
 */
export function confirmWithinMs(ackWaitMs: number): number {
  return Math.max(250, Math.min(BUS_REQUEST_TIMEOUT_MS, Math.floor(ackWaitMs / 2)));
}

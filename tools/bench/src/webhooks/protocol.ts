/** One delivery as the live receiver saw it. */
export interface Arrival {
  /** Epoch ms (sub-ms) when the receiver was handed the request. */
  atMs: number;
  /** The `webhook-id` header (the same on every attempt of one delivery). */
  id: string;
  type?: string;
  /** The event's own `timestamp` (ISO 8601, when the gateway saw the call end). */
  timestamp?: string;
  /** The load generator's tag of the call, from the start of `data.result.text`. */
  tag?: string;
}

/** Bench → receiver. */
export type ReceiverRequest = { type: 'collect' };

/** Receiver → bench. */
export type ReceiverReport = { type: 'listening'; port: number } | { type: 'arrivals'; arrivals: Arrival[] };

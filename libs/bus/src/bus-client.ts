import {
  BUS_REQUEST_TIMEOUT_MS,
  CallHeaders,
  PayloadTooLargeError,
  ServiceError,
  subject,
  type Address,
  type BusOperation,
  type BusReply,
  type BusRequest,
  type BusResponse,
  type ReplyHeader,
  agentSubject,
  type AgentScopedOperation,
} from '@mcpgw/contracts';
import {
  ErrorCode,
  NatsError,
  headers as natsHeaders,
  type Msg,
  type NatsConnection,
  type RequestOptions,
  type Subscription,
} from 'nats';
import { admit, refuseOnBus } from './bus-edge';
import { busMeter } from './bus-meter';
import { replyAllowed } from './auth/reply-inboxes';
import { traceReceive, traceSend, withRequestId } from './bus-tracing';
import { connectionState, type ConnectionState } from './connection-status';
import type { BusOptions } from './bus-options';
import { busLog } from './bus-log';
import { decodeJson, encodeJson, type Encoded } from './json';

/** What a message's headers may take of the server's `max_payload` (trace context, call ids, acks). */
const HEADER_ROOM_BYTES = 8 * 1024;

/** The bus did not answer in time. */
export class BusTimeoutError extends ServiceError {
  constructor(operation: string, timeoutMs: number) {
    super('unavailable', `${operation}: no answer within ${timeoutMs} ms`);
  }
}

/** What a publish takes: the value, or its bytes already encoded. Typed by the address alone. */
export type Outgoing<T> = NoInfer<T> | Encoded<NoInfer<T>>;

/** Headers of the direct reply path (`ReplyHeaders`) and of a call (`CallHeaders`); the only ones apps set. */
export type BusHeaders = Partial<Record<ReplyHeader | (typeof CallHeaders)[keyof typeof CallHeaders], string>>;

/** What a request may carry besides its payload. */
export interface RequestExtras {
  /** The HTTP request's id (X-Request-Id): in `Mcpgw-Request-Id`, for the receivers' log lines. */
  requestId?: string;
  /** Headers of the request itself (e.g. `Mcpgw-Ack` on a reply to the replica that delivered its message). */
  headers?: BusHeaders;
}

/** A payload that passed its subject's check, as a subscriber gets it. */
export interface Received<T, R = never> {
  readonly payload: T;
  /** The payload's bytes as they came: publish them on with no second encode. */
  readonly raw: Encoded<T>;
  /** The subject it came on (agent-scoped subjects name the sender). */
  readonly subject: string;
  header(name: ReplyHeader): string | undefined;
  /** Set when the sender waits for an answer (a request). */
  readonly respond?: (frame: BusReply<R>) => void;
}

export interface BusSubscription {
  unsubscribe(): void;
}

export interface SubscribeOptions {
  queue?: string;
  /**
   * The app cannot work without this subscription (e.g. the replies subject of a
   * message service replica): the `nats` readiness check says `subscription closed`
   * if the server closes it (a permission the NATS account does not grant, …).
   */
  essential?: boolean;
}

/**
 * The typed bus. Request/reply by `BusOperations`; publish and subscribe by
 * the subjects declared in contracts (`Address`), so every publish type-checks
 * and every payload received is checked once, here, before a handler sees it.
 */
export class BusClient {
  /** The `essential` subscriptions, until unsubscribed. */
  private readonly essential = new Set<Subscription>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly options: BusOptions,
  ) {}

  get prefix(): string {
    return this.options.prefix;
  }

  /**
   * The largest message the server takes (`max_payload` of its INFO, headers
   * included; NATS's default is 1 MiB). A larger publish or request fails.
   */
  maxPayload(): number {
    return this.nc.info?.max_payload ?? 1_048_576;
  }

  /**
   * `payload`, when it fits on the bus with room for headers; else a
   * PayloadTooLargeError (thrown before anything is sent), which the caller
   * can answer for, where NATS would only refuse the publish.
   */
  private sized(payload: Uint8Array): Uint8Array {
    const limit = this.maxPayload() - HEADER_ROOM_BYTES;
    if (payload.length > limit) throw new PayloadTooLargeError(payload.length, limit);
    return payload;
  }

  request<K extends BusOperation>(
    operation: K,
    payload: BusRequest<K>,
    timeoutMs = BUS_REQUEST_TIMEOUT_MS,
    extras: RequestExtras = {},
  ): Promise<BusResponse<K>> {
    return this.call(
      subject(this.options.prefix, operation),
      operation,
      this.sized(encodeJson(payload)),
      timeoutMs,
      extras,
    );
  }

  /**
   * An agent-scoped operation (`AGENT_SCOPED_OPERATIONS`): its subject names the
   * agent, and only that agent's credentials may send it.
   */
  requestAs<K extends AgentScopedOperation>(
    agentId: string,
    operation: K,
    payload: BusRequest<K>,
    timeoutMs = BUS_REQUEST_TIMEOUT_MS,
  ): Promise<BusResponse<K>> {
    const to = subject(this.options.prefix, agentSubject(operation, agentId));
    return this.call(to, operation, this.sized(encodeJson(payload)), timeoutMs);
  }

  /**
   * A request to one subject that also takes requests (e.g. the replies subject
   * of the message service replica that waits for the reply).
   */
  requestAt<T, R>(
    to: Address<T, R>,
    payload: Outgoing<T>,
    timeoutMs = BUS_REQUEST_TIMEOUT_MS,
    extras: RequestExtras = {},
  ): Promise<R> {
    return this.call(to.subject(this.options.prefix), to.family, this.sized(bytesOf(payload)), timeoutMs, extras);
  }

  /** Fire-and-forget (at-most-once): an event, or a per-call subject. */
  publish<T>(to: Address<T, unknown>, payload: Outgoing<T>, headers?: BusHeaders): void {
    const data = this.sized(bytesOf(payload));
    const given = headers && toNatsHeaders(headers);
    const traced = traceSend('publish', to.family, given);
    const hdrs = traced?.headers ?? given;
    this.nc.publish(to.subject(this.options.prefix), data, hdrs && { headers: hdrs });
    traced?.end();
  }

  /**
   * Hear a subject until `unsubscribe`. Each payload is checked against the
   * subject's contract first; an invalid one is dropped (counted, logged), or
   * refused with `invalid_request` when it was a request. A message with a
   * reply subject is taken only on a request family, and only when that
   * subject is the asker's own reply inbox (auth/reply-inboxes.ts): anything
   * else is dropped and counted, never answered.
   */
  subscribe<T, R = never>(
    from: Address<T, R>,
    onMessage: (received: Received<T, R>) => void,
    options: SubscribeOptions = {},
  ): BusSubscription {
    busMeter.listening(from.family);
    const sub = this.nc.subscribe(from.subject(this.options.prefix), {
      queue: options.queue,
      callback: (error, msg) => {
        if (error) return busLog.warn(`subscription ${from.family}: ${error.message}`);
        if (msg.reply && !replyAllowed(this.options.prefix, from.family, msg.subject, msg.reply)) {
          // Not the asker's own inbox (or no request is taken here): neither handled nor answered.
          return refuseOnBus(
            from.family,
            'message with a foreign reply subject',
            "reply subject outside the asker's inbox",
          );
        }
        const parsed = admit(from, msg.data);
        if (parsed.ok) {
          const kind = msg.reply ? 'request' : 'message';
          return traceReceive(kind, from.family, msg.headers, () => onMessage(received(parsed.value, msg)));
        }
        if (msg.reply)
          respond(msg, {
            ok: false,
            error: { code: 'invalid_request', message: 'invalid payload', details: parsed.errors },
          });
      },
    });
    if (!options.essential) return sub;
    this.essential.add(sub);
    return {
      unsubscribe: () => {
        this.essential.delete(sub);
        sub.unsubscribe();
      },
    };
  }

  /** Resolves once the server has everything sent so far (e.g. a subscription is in place). */
  flush(): Promise<void> {
    return this.nc.flush();
  }

  /** Each reconnect to NATS, until the connection closes: what was published meanwhile is lost. */
  async *reconnects(): AsyncIterable<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'reconnect') yield;
    }
  }

  /**
   * A readiness check: the connection is open, not between a disconnect and its
   * reconnect, the server answers, and no `essential` subscription was closed.
   * States: `closed`, `reconnecting`, `subscription closed`.
   */
  readiness(): { name: string; check(): Promise<string | void> } {
    const state: ConnectionState = connectionState(this.nc);
    return {
      name: 'nats',
      check: async () => {
        if (this.nc.isClosed()) return 'closed';
        if (!state.connected) return 'reconnecting';
        await this.nc.flush();
        for (const sub of this.essential) if (sub.isClosed()) return 'subscription closed';
      },
    };
  }

  /** A request, in a client span when a trace is active (its context rides in the headers). */
  private async call<R>(
    to: string,
    operation: string,
    payload: Uint8Array,
    timeoutMs: number,
    extras: RequestExtras = {},
  ): Promise<R> {
    const given = withRequestId(extras.headers && toNatsHeaders(extras.headers), extras.requestId);
    const traced = traceSend('request', operation, given);
    const headers = traced?.headers ?? given;
    const options: RequestOptions = headers ? { timeout: timeoutMs, headers } : { timeout: timeoutMs };
    if (!traced) return this.exchange<R>(to, operation, payload, options);
    try {
      const answer = await this.exchange<R>(to, operation, payload, options);
      traced.end();
      return answer;
    } catch (error) {
      traced.end(error);
      throw error;
    }
  }

  private async exchange<R>(to: string, operation: string, payload: Uint8Array, options: RequestOptions): Promise<R> {
    const timeoutMs = options.timeout;
    let raw: Uint8Array;
    try {
      raw = (await this.nc.request(to, payload, options)).data;
    } catch (error) {
      throw toServiceError(error, operation, timeoutMs);
    }
    // The answer comes from our own service, which checked what it answers: only its frame is checked here.
    const reply = decodeJson(raw) as BusReply<R> | undefined;
    if (!reply || typeof reply !== 'object') {
      throw new ServiceError('internal', `${operation}: malformed reply`);
    }
    if (!reply.ok) throw new ServiceError(reply.error.code, reply.error.message, reply.error.details);
    return reply.data;
  }
}

function bytesOf<T>(payload: Outgoing<T>): Uint8Array {
  return payload instanceof Uint8Array ? payload : encodeJson(payload);
}

function toNatsHeaders(headers: BusHeaders) {
  const hdrs = natsHeaders();
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) hdrs.set(name, value);
  return hdrs;
}

function received<T, R>(payload: T, msg: Msg): Received<T, R> {
  return {
    payload,
    raw: msg.data as Encoded<T>,
    subject: msg.subject,
    header: (name) => msg.headers?.get(name) || undefined,
    respond: msg.reply ? (frame) => respond(msg, frame) : undefined,
  };
}

function respond(msg: Msg, frame: BusReply<unknown>): void {
  msg.respond(encodeJson(frame));
}

function toServiceError(error: unknown, operation: string, timeoutMs: number): ServiceError {
  if (error instanceof NatsError) {
    if (error.code === ErrorCode.NoResponders) {
      return new ServiceError('unavailable', `${operation}: no service is listening`);
    }
    if (error.code === ErrorCode.Timeout) return new BusTimeoutError(operation, timeoutMs);
    return new ServiceError('unavailable', `${operation}: ${error.code}`);
  }
  return new ServiceError('internal', `${operation}: ${(error as Error).message}`);
}

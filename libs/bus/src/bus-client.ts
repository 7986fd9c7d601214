import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  BUS_REQUEST_TIMEOUT_MS,
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
import { ErrorCode, NatsError, headers as natsHeaders, type Msg, type NatsConnection, type RequestOptions } from 'nats';
import { admit } from './bus-edge';
import { traceReceive, traceSend } from './bus-tracing';
import { BUS_OPTIONS, NATS_CONNECTION, type BusOptions } from './bus-options';
import { decodeJson, encodeJson, type Encoded } from './json';

const logger = new Logger('Bus');

/** The bus did not answer in time. */
export class BusTimeoutError extends ServiceError {
  constructor(operation: string, timeoutMs: number) {
    super('unavailable', `${operation}: no answer within ${timeoutMs} ms`);
  }
}

/** What a publish takes: the value, or its bytes already encoded. Typed by the address alone. */
export type Outgoing<T> = NoInfer<T> | Encoded<NoInfer<T>>;

/** Headers of the direct reply path (`ReplyHeaders`); the only ones apps set. */
export type BusHeaders = Partial<Record<ReplyHeader, string>>;

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

/**
 * The typed bus. Request/reply by `BusOperations`; publish and subscribe by
 * the subjects declared in contracts (`Address`), so every publish type-checks
 * and every payload received is checked once, here, before a handler sees it.
 */
@Injectable()
export class BusClient {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_OPTIONS) private readonly options: BusOptions,
  ) {}

  get prefix(): string {
    return this.options.prefix;
  }

  request<K extends BusOperation>(
    operation: K,
    payload: BusRequest<K>,
    timeoutMs = BUS_REQUEST_TIMEOUT_MS,
  ): Promise<BusResponse<K>> {
    return this.call(subject(this.options.prefix, operation), operation, encodeJson(payload), timeoutMs);
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
    return this.call(to, operation, encodeJson(payload), timeoutMs);
  }

  /**
   * A request to one subject that also takes requests (e.g. the replies subject
   * of the message service replica that waits for the reply).
   */
  requestAt<T, R>(to: Address<T, R>, payload: Outgoing<T>, timeoutMs = BUS_REQUEST_TIMEOUT_MS): Promise<R> {
    return this.call(to.subject(this.options.prefix), to.family, bytesOf(payload), timeoutMs);
  }

  /** Fire-and-forget (at-most-once): an event, or a per-call subject. */
  publish<T>(to: Address<T, unknown>, payload: Outgoing<T>, headers?: BusHeaders): void {
    const given = headers && toNatsHeaders(headers);
    const traced = traceSend('publish', to.family, given);
    const hdrs = traced?.headers ?? given;
    this.nc.publish(to.subject(this.options.prefix), bytesOf(payload), hdrs && { headers: hdrs });
    traced?.end();
  }

  /**
   * Hear a subject until `unsubscribe`. Each payload is checked against the
   * subject's contract first; an invalid one is dropped (counted, logged), or
   * refused with `invalid_request` when it was a request.
   */
  subscribe<T, R = never>(
    from: Address<T, R>,
    onMessage: (received: Received<T, R>) => void,
    options: { queue?: string } = {},
  ): BusSubscription {
    return this.nc.subscribe(from.subject(this.options.prefix), {
      queue: options.queue,
      callback: (error, msg) => {
        if (error) return logger.warn(`subscription ${from.family}: ${error.message}`);
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

  /** A readiness check: the connection is open and the server answers. */
  readiness(): { name: string; check(): Promise<void> } {
    return {
      name: 'nats',
      check: async () => {
        if (this.nc.isClosed()) throw new Error('connection closed');
        await this.nc.flush();
      },
    };
  }

  /** A request, in a client span when a trace is active (its context rides in the headers). */
  private async call<R>(to: string, operation: string, payload: Uint8Array, timeoutMs: number): Promise<R> {
    const traced = traceSend('request', operation);
    if (!traced) return this.exchange<R>(to, operation, payload, { timeout: timeoutMs });
    try {
      const answer = await this.exchange<R>(to, operation, payload, { timeout: timeoutMs, headers: traced.headers });
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

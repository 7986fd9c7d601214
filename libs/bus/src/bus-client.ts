import { Inject, Injectable } from '@nestjs/common';
import {
  ServiceError,
  subject,
  type BusEvent,
  type BusOperation,
  type BusReply,
  type BusRequest,
  type BusResponse,
} from '@mcpgw/contracts';
import { ErrorCode, NatsError, type NatsConnection } from 'nats';
import { BUS_OPTIONS, NATS_CONNECTION, type BusOptions } from './bus-options';
import { decodeJson, encodeJson } from './json';

/** The bus did not answer in time. */
export class BusTimeoutError extends ServiceError {
  constructor(operation: string, timeoutMs: number) {
    super('unavailable', `${operation}: no answer within ${timeoutMs} ms`);
  }
}

/**
 * Typed request/reply over NATS. Every operation of `BusOperations` is one
 * subject; replies come back as `BusReply` frames and failures as ServiceError.
 */
@Injectable()
export class BusClient {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_OPTIONS) private readonly options: BusOptions,
  ) {}

  request<K extends BusOperation>(operation: K, payload: BusRequest<K>, timeoutMs = 5_000): Promise<BusResponse<K>> {
    return this.requestAt(subject(this.options.prefix, operation), operation, payload, timeoutMs);
  }

  /**
   * The same request, to one replica's own subject instead of the operation's
   * queue group (e.g. a reply to the message service replica that waits for it).
   */
  async requestAt<K extends BusOperation>(
    to: string,
    operation: K,
    payload: unknown,
    timeoutMs = 5_000,
  ): Promise<BusResponse<K>> {
    let raw: Uint8Array;
    try {
      raw = (await this.nc.request(to, encodeJson(payload), { timeout: timeoutMs })).data;
    } catch (error) {
      throw toServiceError(error, operation, timeoutMs);
    }
    const reply = decodeJson(raw) as BusReply<BusResponse<K>> | undefined;
    if (!reply || typeof reply !== 'object') {
      throw new ServiceError('internal', `${operation}: malformed reply`);
    }
    if (!reply.ok) throw new ServiceError(reply.error.code, reply.error.message, reply.error.details);
    return reply.data;
  }

  /** Fire-and-forget event (at-most-once). */
  publish(event: BusEvent, payload: unknown): void {
    this.nc.publish(subject(this.options.prefix, event), encodeJson(payload));
  }
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

import { Logger } from '@nestjs/common';
import { ServiceError, isKeyReused } from '@mcpgw/contracts';
import {
  BackendUnavailableError,
  CallError,
  ConversationGoneError,
  IdempotencyKeyReusedError,
  InternalCallError,
} from './call-errors';
import type { PreparedCall } from './call-shapes';

const logger = new Logger('CallPipeline');

/**
 * Bus failures become typed call errors; anything unexpected is logged once, here. A keyed
 * posting refused for its fingerprint is the key's reuse.
 */
export async function onBus<T>(step: () => Promise<T>, idempotency?: PreparedCall['idempotency']): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof CallError) throw error;
    if (idempotency && isKeyReused(error)) throw new IdempotencyKeyReusedError(idempotency.key);
    if (error instanceof ServiceError && error.code === 'unavailable') {
      throw new BackendUnavailableError(error.message);
    }
    // Posting names a channel only the conversation gave: not found, it was deleted by retention.
    if (error instanceof ServiceError && error.code === 'not_found') throw new ConversationGoneError();
    logger.error({ msg: 'bus step failed', error: (error as Error).message });
    throw new InternalCallError((error as Error).message);
  }
}

import {
  BusPattern,
  UNSTORABLE_TEXT_REFUSAL,
  PayloadTooLargeError,
  ReplyHeaders,
  ServiceError,
  type AgentReply,
  type ChatMessage,
  type ContentItemDto,
  holdsUnstorableText,
  isRetryable,
} from '@mcpgw/contracts';
import { retry, type BusClient, type ReplicaAddress } from '@mcpgw/bus/core';
import { randomUUID } from 'node:crypto';
import type { SkillOutput } from '../skills/skill';

/** Backoff between tries to store a reply: the message service may be restarting. */
const FIRST_RETRY_MS = 200;
const MAX_RETRY_MS = 3_000;

/**
 * Turns a skill's output into an `agent_reply` and gets it stored by the
 * message service, one of two ways: straight to the replica that delivered
 * the message, which acks the message once the reply is stored and then
 * answers; or, after a redelivery (or when that answer did not come), stored
 * at any replica, and the agent acks itself (../inbox/README.md, "The reply
 * path").
 */
export class Replier {
  constructor(
    private readonly bus: BusClient,
    private readonly agentId: string,
    private readonly podId: string,
  ) {}

  toReply(message: ChatMessage, output: SkillOutput): AgentReply {
    // The message service refuses U+0000 and lone surrogates (jsonb cannot store them): the caller gets a tool error saying so.
    if (holdsUnstorableText(output.content) || holdsUnstorableText(output.structured)) output = unstorable();
    return {
      type: 'agent_reply',
      id: randomUUID(),
      channel_id: message.channel_id!,
      agent_id: message.agent_id,
      in_reply_to: message.id,
      created_at: new Date().toISOString(),
      content: output.content as ContentItemDto[],
      structured_content: output.structured,
      is_error: output.isError || undefined,
      meta: { pod_id: this.podId, ...(output.protocolError ? { protocol_error: output.protocolError } : {}) },
    };
  }

  /**
   * A first delivery's reply, to the replica that delivered the message, with
   * its ack subject: the replica stores it, acks the message for us, and only
   * then answers. Resolves on that answer; throws when it does not come (the
   * replica died, or the reply or its answer was lost with a NATS server), and
   * the caller stores the reply itself (`store`). Without the answer a lost
   * reply would be found only after the ack wait, by whichever instance gets
   * the message next: one that never ran the skill would run it again.
   */
  async storeDirect(reply: AgentReply, replica: ReplicaAddress, ackSubject: string, timeoutMs: number): Promise<void> {
    await fitted(reply, (answer) =>
      this.bus.requestAt(replica, answer, timeoutMs, { headers: { [ReplyHeaders.ack]: ackSubject } }),
    );
  }

  /**
   * Resolves once the reply is stored; the caller acks the inbox message only
   * then. Tried first at the replica that delivered the message (it may hold
   * the waiter), then at any replica. Only the post is retried, with backoff,
   * for as long as the failure is transient and `stop` is not aborted (the
   * first try runs regardless); then the last error is thrown.
   */
  store(
    reply: AgentReply,
    replica: ReplicaAddress | undefined,
    stop?: AbortSignal,
    onRetry?: (error: unknown, attempt: number) => void,
  ): Promise<void> {
    return retry((attempt) => fitted(reply, (answer) => this.storeOnce(answer, replica, attempt)), {
      firstDelayMs: FIRST_RETRY_MS,
      maxDelayMs: MAX_RETRY_MS,
      signal: stop,
      retryIf: isRetryable,
      onRetry,
    });
  }

  private async storeOnce(reply: AgentReply, replica: ReplicaAddress | undefined, attempt: number): Promise<void> {
    if (replica && attempt === 1 && (await this.storeAt(replica, reply))) return;
    await this.bus.requestAs(this.agentId, BusPattern.StoreReply, { envelope: reply });
  }

  /** Store the reply at one replica (its replies subject takes the bare envelope); false when that replica is gone. */
  private async storeAt(replica: ReplicaAddress, reply: AgentReply): Promise<boolean> {
    try {
      await this.bus.requestAt(replica, reply);
      return true;
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'unavailable') return false;
      throw error;
    }
  }

  /**
   * Whether a reply to `message` is stored (by any instance of the agent).
   * Retried like `store` while the message service is away; a refusal or an
   * aborted `stop` throws.
   */
  isAnswered(
    message: ChatMessage,
    stop?: AbortSignal,
    onRetry?: (error: unknown, attempt: number) => void,
  ): Promise<boolean> {
    const ask = () =>
      this.bus.requestAs(this.agentId, BusPattern.IsAnswered, {
        channel_id: message.channel_id!,
        message_id: message.id,
      });
    return retry(ask, {
      firstDelayMs: FIRST_RETRY_MS,
      maxDelayMs: MAX_RETRY_MS,
      signal: stop,
      retryIf: isRetryable,
      onRetry,
    }).then((answer) => answer.answered);
  }

  history(message: ChatMessage) {
    return this.bus
      .requestAs(this.agentId, BusPattern.AgentHistory, { channel_id: message.channel_id!, limit: 200 })
      .then((page) => page.messages);
  }
}

/** A skill's output the store cannot hold. */
function unstorable(): SkillOutput {
  return {
    content: [{ type: 'text', text: `the tool's result cannot be stored: ${UNSTORABLE_TEXT_REFUSAL}` }],
    isError: true,
  };
}

/** Send `reply`; one the bus refuses as too large is sent instead as the error that says so. */
async function fitted(reply: AgentReply, send: (reply: AgentReply) => Promise<unknown>): Promise<void> {
  try {
    await send(reply);
  } catch (error) {
    if (!(error instanceof PayloadTooLargeError)) throw error;
    await send(tooLargeToDeliver(reply, error));
  }
}

/**
 * A skill's output the bus cannot carry: the caller gets a tool error that says
 * so, at once (sent as it was, NATS would refuse it and the caller would wait
 * out its whole timeout).
 */
function tooLargeToDeliver(reply: AgentReply, error: PayloadTooLargeError): AgentReply {
  return {
    ...reply,
    content: [{ type: 'text', text: `the tool's result is too large to deliver: ${error.message}` }],
    structured_content: undefined,
    is_error: true,
  };
}

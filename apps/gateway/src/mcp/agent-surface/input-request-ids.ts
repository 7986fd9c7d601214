import { Inject, Injectable } from '@nestjs/common';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { GATEWAY_ENV, type GatewayEnv } from '../../config/gateway.env';

const PREFIX = 'mcpgw-input';
/** The question's key is a UUID or a name a skill gave it (agent-pod QUESTION_KEY). */
const ID = /^mcpgw-input:([0-9a-f-]{36}):([A-Za-z0-9_.-]{1,64}):([A-Za-z0-9_-]{22})$/;

/** Which message and which of its questions a client's response answers. */
export interface InputTarget {
  messageId: string;
  key: string;
}

/**
 * The JSON-RPC ids of the requests an agent sends a client through us (sampling,
 * elicitation, roots): `mcpgw-input:<message>:<question>:<tag>`. The id names the
 * message and the question, so whichever replica receives the answer knows where
 * to publish it; the tag (HMAC under a key derived from CONVERSATION_HANDLE_SECRET)
 * binds it to the session the request went to, so an answer from any other
 * session — another client of the same agent, the same key in another session — is
 * dropped. Replicas verify each other's ids when they share that secret (required
 * in production; without it, answers must reach the replica that asked).
 */
@Injectable()
export class InputRequestIds {
  private readonly key: Buffer;

  constructor(@Inject(GATEWAY_ENV) env: GatewayEnv) {
    const secret = env.CONVERSATION_HANDLE_SECRET ? Buffer.from(env.CONVERSATION_HANDLE_SECRET) : randomBytes(32);
    this.key = createHmac('sha256', secret).update('mcpgw input request ids').digest();
  }

  /** The id of question `key` of message `messageId`, asked in session `sessionId`. */
  idFor(messageId: string, key: string, sessionId: string): string {
    return `${PREFIX}:${messageId}:${key}:${this.tag(messageId, key, sessionId)}`;
  }

  /** What a response from session `sessionId` answers; undefined if the id is not ours or not for that session. */
  answerTarget(id: unknown, sessionId: string | undefined): InputTarget | undefined {
    const match = typeof id === 'string' ? ID.exec(id) : null;
    if (!match || !sessionId) return undefined;
    const [, messageId, key, tag] = match;
    const expected = Buffer.from(this.tag(messageId, key, sessionId));
    return timingSafeEqual(expected, Buffer.from(tag)) ? { messageId, key } : undefined;
  }

  private tag(messageId: string, key: string, sessionId: string): string {
    return createHmac('sha256', this.key).update(`${messageId}:${key}:${sessionId}`).digest('base64url').slice(0, 22);
  }
}

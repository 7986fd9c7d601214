import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';

/** Where a 2026-07-28 client finds and returns its conversation handle. */
export const CONVERSATION_META_KEY = 'mcpgw/conversation';

interface HandleClaims {
  /** The IM channel of the conversation. */
  c: string;
  /** The agent it belongs to. */
  a: string;
  /** The caller it belongs to. */
  k: string;
}

/**
 * Multi-turn without protocol sessions (MCP 2026-07-28): each tools/call result
 * carries an opaque handle in `_meta["mcpgw/conversation"]`; a call that sends it
 * back continues the same conversation (the same IM channel). A handle is
 * HMAC-signed and bound to the agent and the caller, so it cannot be forged or
 * used by another key. Any replica with the same secret can verify it.
 */
@Injectable()
export class ConversationHandles {
  private readonly logger = new Logger(ConversationHandles.name);
  private readonly secret: Buffer;

  constructor(@Inject(GATEWAY_ENV) env: GatewayEnv) {
    if (env.CONVERSATION_HANDLE_SECRET) {
      this.secret = Buffer.from(env.CONVERSATION_HANDLE_SECRET, 'utf8');
    } else {
      this.secret = randomBytes(32);
      this.logger.warn('CONVERSATION_HANDLE_SECRET is not set: conversation handles are valid on this replica only');
    }
  }

  mint(channelId: string, agentId: string, callerId: string): string {
    const payload = Buffer.from(
      JSON.stringify({ c: channelId, a: agentId, k: callerId } satisfies HandleClaims),
    ).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  /** The channel of a genuine handle of this agent and caller; undefined for anything else. */
  channelOf(handle: unknown, agentId: string, callerId: string): string | undefined {
    if (typeof handle !== 'string' || handle.length > 1024) return undefined;
    const [payload, signature] = handle.split('.');
    if (!payload || !signature) return undefined;
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    try {
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as HandleClaims;
      return claims.a === agentId && claims.k === callerId ? claims.c : undefined;
    } catch {
      return undefined;
    }
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.secret).update(payload).digest('base64url');
  }
}

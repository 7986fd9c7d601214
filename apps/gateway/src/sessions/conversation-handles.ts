import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
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
  /** Expiry, in seconds since the epoch. */
  e: number;
}

interface HandleKey {
  kid: string;
  secret: Buffer;
}

const MAX_HANDLE_LENGTH = 1024;

/**
 * Multi-turn without protocol sessions (MCP 2026-07-28): each tools/call result
 * carries an opaque handle in `_meta["mcpgw/conversation"]`; a call that sends it
 * back continues the same conversation (the same IM channel).
 *
 * A handle is `<kid>.<claims>.<hmac>`: HMAC-SHA256 under the secret named by its
 * key id, bound to the agent and the caller (so another key cannot use it), and
 * valid until its expiry. A handle is renewed by the call that uses it once half
 * its life is gone, so a conversation in use never expires. Rotation: put the new
 * secret in CONVERSATION_HANDLE_SECRET and the old one in
 * CONVERSATION_HANDLE_PREVIOUS_SECRETS until CONVERSATION_HANDLE_TTL_SECONDS has
 * passed. Any replica with the same secrets verifies any handle.
 */
@Injectable()
export class ConversationHandles {
  private readonly logger = new Logger(ConversationHandles.name);
  private readonly current: HandleKey;
  private readonly keys = new Map<string, Buffer>();
  private readonly ttlSeconds: number;

  constructor(@Inject(GATEWAY_ENV) env: GatewayEnv) {
    this.ttlSeconds = env.CONVERSATION_HANDLE_TTL_SECONDS;
    if (!env.CONVERSATION_HANDLE_SECRET) {
      this.logger.warn('CONVERSATION_HANDLE_SECRET is not set: conversation handles are valid on this replica only');
    }
    this.current = handleKey(
      env.CONVERSATION_HANDLE_SECRET ? Buffer.from(env.CONVERSATION_HANDLE_SECRET) : randomBytes(32),
    );
    const previous = env.CONVERSATION_HANDLE_PREVIOUS_SECRETS.split(',').filter(Boolean);
    for (const { kid, secret } of [this.current, ...previous.map((s) => handleKey(Buffer.from(s)))]) {
      this.keys.set(kid, secret);
    }
  }

  mint(channelId: string, agentId: string, callerId: string, now = Date.now()): string {
    const claims: HandleClaims = { c: channelId, a: agentId, k: callerId, e: Math.floor(now / 1000) + this.ttlSeconds };
    const signed = `${this.current.kid}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    return `${signed}.${sign(this.current.secret, signed)}`;
  }

  /**
   * The handle to return with a call's result: the one the call brought while it
   * has more than half its life left and names this channel, else a fresh one.
   */
  renew(handle: unknown, channelId: string, agentId: string, callerId: string, now = Date.now()): string {
    const claims = this.verify(handle, agentId, callerId, now);
    const fresh = claims && claims.c === channelId && claims.e - now / 1000 > this.ttlSeconds / 2;
    return fresh ? (handle as string) : this.mint(channelId, agentId, callerId, now);
  }

  /** The channel of a genuine, unexpired handle of this agent and caller; undefined for anything else. */
  channelOf(handle: unknown, agentId: string, callerId: string, now = Date.now()): string | undefined {
    return this.verify(handle, agentId, callerId, now)?.c;
  }

  private verify(handle: unknown, agentId: string, callerId: string, now: number): HandleClaims | undefined {
    if (typeof handle !== 'string' || handle.length > MAX_HANDLE_LENGTH) return undefined;
    const [kid, payload, signature, extra] = handle.split('.');
    const secret = kid ? this.keys.get(kid) : undefined;
    if (!secret || !payload || !signature || extra !== undefined) return undefined;
    const expected = Buffer.from(sign(secret, `${kid}.${payload}`));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    try {
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as HandleClaims;
      if (claims.a !== agentId || claims.k !== callerId) return undefined;
      return typeof claims.e === 'number' && claims.e > now / 1000 ? claims : undefined;
    } catch {
      return undefined;
    }
  }
}

/** A secret and its key id: the first bytes of its SHA-256, which name it without revealing it. */
function handleKey(secret: Buffer): HandleKey {
  return { kid: createHash('sha256').update(secret).digest('base64url').slice(0, 8), secret };
}

function sign(secret: Buffer, data: string): string {
  return createHmac('sha256', secret).update(data).digest('base64url');
}

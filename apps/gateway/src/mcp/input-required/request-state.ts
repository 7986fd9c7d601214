import { Inject, Injectable } from '@nestjs/common';
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import type { ClientRequestMethod } from '@mcpgw/contracts';
import { GATEWAY_ENV, type GatewayEnv } from '../../config/gateway.env';
import { canonicalJson } from '../../idempotency/fingerprint';

/** How long a client has to answer the questions of one InputRequiredResult. */
export const REQUEST_STATE_TTL_MS = 10 * 60_000;
/** A requestState longer than this is not ours (ours hold a few questions: well under it). */
const MAX_STATE_CHARS = 256 * 1024;

/** A question the agent asked and the client has not answered yet. */
export interface OpenQuestion {
  method: ClientRequestMethod;
  params: Record<string, unknown>;
}

/** What a requestState carries: the call in flight, whom it belongs to, and what is still asked. */
export interface RequestState {
  /** Principal: `apikey:<key id>`. */
  principal: string;
  agentId: string;
  /** The request it continues: method and a digest of its salient params (`requestDigest`). */
  method: string;
  digest: string;
  messageId: string;
  channelId: string;
  /** The questions of this round not answered yet, by key. */
  open: Record<string, OpenQuestion>;
  /** Epoch ms after which the agent stops waiting for the call (its deadline, fixed when first posted). */
  callEndsAt: number;
  /** Epoch ms after which the state is refused: REQUEST_STATE_TTL_MS after it was issued, never after `callEndsAt`. */
  expiresAt: number;
}

export type OpenedState = { ok: true; state: RequestState } | { ok: false; reason: string };

interface StateKey {
  kid: string;
  key: Buffer;
}

/**
 * requestState (MRTR, SEP-2322): AES-256-GCM under a key named by its id
 * (`<kid>.<base64url(iv | ciphertext | tag)>`, the key id is the associated
 * data). The keys are derived from CONVERSATION_HANDLE_SECRET (and the
 * previous secrets, for rotation), so every replica that shares the secret
 * opens what any other sealed. The client sees an opaque string: neither the
 * message id nor the questions' params leak, and any change fails the tag.
 */
@Injectable()
export class RequestStates {
  private readonly current: StateKey;
  private readonly keys = new Map<string, Buffer>();

  constructor(@Inject(GATEWAY_ENV) env: GatewayEnv) {
    const secret = env.CONVERSATION_HANDLE_SECRET ? Buffer.from(env.CONVERSATION_HANDLE_SECRET) : randomBytes(32);
    const previous = env.CONVERSATION_HANDLE_PREVIOUS_SECRETS.split(',').filter(Boolean);
    this.current = stateKey(secret);
    for (const { kid, key } of [this.current, ...previous.map((s) => stateKey(Buffer.from(s)))])
      this.keys.set(kid, key);
  }

  seal(state: RequestState): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(this.current.kid));
    const sealed = Buffer.concat([cipher.update(JSON.stringify(state), 'utf8'), cipher.final()]);
    return `${this.current.kid}.${Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url')}`;
  }

  /**
   * The state, if it is genuine, unexpired, and presented by its principal on
   * the request it was issued for; else why not (the caller answers -32602).
   */
  open(
    token: unknown,
    expected: Pick<RequestState, 'principal' | 'agentId' | 'method' | 'digest'>,
    now = Date.now(),
  ): OpenedState {
    const state = typeof token === 'string' && token.length <= MAX_STATE_CHARS ? this.decrypt(token) : undefined;
    if (!state) return { ok: false, reason: 'requestState is not one this server issued (or it was altered)' };
    if (state.principal !== expected.principal || state.agentId !== expected.agentId)
      return { ok: false, reason: 'requestState belongs to another principal' };
    if (state.method !== expected.method || state.digest !== expected.digest)
      return { ok: false, reason: 'requestState was issued for another request' };
    if (!(state.expiresAt > now)) return { ok: false, reason: 'requestState has expired' };
    return { ok: true, state };
  }

  private decrypt(token: string): RequestState | undefined {
    const [kid, body, extra] = token.split('.');
    const key = kid ? this.keys.get(kid) : undefined;
    if (!key || !body || extra !== undefined || !/^[A-Za-z0-9_-]+$/.test(body)) return undefined;
    const bytes = Buffer.from(body, 'base64url');
    if (bytes.length < 12 + 16 + 2) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
      decipher.setAAD(Buffer.from(kid));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      const plain = Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]);
      return JSON.parse(plain.toString('utf8')) as RequestState;
    } catch {
      return undefined;
    }
  }
}

/** The AEAD key of a secret (its own derivation: never the secret's HMAC key) and its id. */
function stateKey(secret: Buffer): StateKey {
  const key = createHmac('sha256', secret).update('mcpgw request state v1').digest();
  return { kid: `s${createHash('sha256').update(key).digest('base64url').slice(0, 8)}`, key };
}

/**
 * What identifies the request a state belongs to: the method and its target
 * and arguments (canonical JSON: key order does not matter), hashed.
 */
export function requestDigest(method: string, params: Record<string, unknown>): string {
  const salient =
    method === 'resources/read' ? { uri: params.uri } : { name: params.name, arguments: params.arguments ?? {} };
  return createHash('sha256').update(canonicalJson(salient)).digest('base64url');
}

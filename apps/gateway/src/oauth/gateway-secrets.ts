import {
  ADMIN_LOGIN_CODE_PREFIX,
  ADMIN_SESSION_PREFIX,
  ADMIN_TOKEN_PREFIX,
  API_KEY_PREFIX,
  PAT_PREFIX,
} from '@mcpgw/contracts';
import { SECRET_PREFIX as WEBHOOK_SECRET_PREFIX } from '../webhooks/webhook-secrets';

/** The secrets this gateway mints, by a shape no authorization server's token has. */
const SHAPES: readonly [kind: string, test: (token: string) => boolean][] = [
  ['an agent API key', (t) => t.startsWith(API_KEY_PREFIX)],
  ['a personal access token', (t) => t.startsWith(PAT_PREFIX)],
  ['an admin token', (t) => t.startsWith(ADMIN_TOKEN_PREFIX)],
  ['an admin session', (t) => t.startsWith(ADMIN_SESSION_PREFIX)],
  ['a console login code', (t) => t.startsWith(ADMIN_LOGIN_CODE_PREFIX)],
  ['a webhook secret', (t) => t.startsWith(WEBHOOK_SECRET_PREFIX)],
  // sessions/conversation-handles.ts: `<kid: 8>.<base64url of {"c":…}>.<HMAC-SHA256: 43>`.
  ['a conversation handle', (t) => /^[A-Za-z0-9_-]{8}\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/.test(t)],
  // A NATS nkey seed (the admin CLI's signing and operator seeds, pod credentials).
  ['a NATS seed', (t) => /^S[OAUNCX][A-Z2-7]{56}$/.test(t)],
];

/**
 * Which of the gateway's own secrets a bearer token is, if it is one: such a
 * token is refused as it is, and never shown to an authorization server
 * (introspection would post it there). RuntimeGrants are JWTs of the
 * gateway's own issuer, refused as an untrusted issuer without leaving it.
 */
export function gatewaySecretKind(token: string): string | undefined {
  return SHAPES.find(([, test]) => test(token))?.[0];
}

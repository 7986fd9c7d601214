import type { SecretBox } from './webhook-secrets';

/** The headers an A2A push config adds to its deliveries, as its client gave them (`../a2a/push/`). */
export interface PushHeaders {
  /** `<scheme> <credentials>` of the config's `authentication`. */
  authorization?: string;
  /** The config's `token`, in the header the A2A SDKs send it in. */
  token?: string;
}

/** Where the config's token goes (the header `@a2a-js/sdk` and the Python SDK send and read). */
export const NOTIFICATION_TOKEN_HEADER = 'x-a2a-notification-token';

/**
 * Credentials at rest are sealed as the secrets are (AES-256-GCM under WEBHOOK_SECRET_KEY), with
 * the row's id and a purpose as the additional data: neither a ciphertext copied to another row
 * nor the row's secret put in their place opens.
 */
const aad = (webhookId: string) => `${webhookId}:a2a-headers`;

/** The additional data of a caller's sealed push signing secret: it opens for that caller of that agent only. */
export const pushSecretAad = (agentId: string, owner: string) => `a2a-push-secret:${agentId}:${owner}`;

/** Sealed headers again with the current key (`webhook reseal-secrets`); as they are when already so. */
export function resealPushHeaders(box: SecretBox, webhookId: string, sealed: Buffer): Buffer {
  return box.isCurrent(sealed) ? sealed : box.seal(aad(webhookId), box.open(aad(webhookId), sealed));
}

export function sealPushHeaders(box: SecretBox, webhookId: string, headers: PushHeaders): Buffer {
  return box.seal(aad(webhookId), JSON.stringify(headers));
}

export function readPushHeaders(box: SecretBox, webhookId: string, sealed: Buffer): PushHeaders {
  return JSON.parse(box.open(aad(webhookId), sealed)) as PushHeaders;
}

/** The HTTP headers of a delivery to the config (never logged). */
export function openPushHeaders(box: SecretBox, webhookId: string, sealed: Buffer): Record<string, string> {
  const headers = readPushHeaders(box, webhookId, sealed);
  return {
    ...(headers.authorization && { authorization: headers.authorization }),
    ...(headers.token && { [NOTIFICATION_TOKEN_HEADER]: headers.token }),
  };
}

import { randomUUID } from 'node:crypto';
import type { PushHeaders } from '../../webhooks/push-headers';
import { isObject } from '../send-message';
import type { StoredConfig } from './push-configs.store';

/** A `TaskPushNotificationConfig` as a client sends it, checked (then its URL by the SSRF guard). */
export interface PushConfigInput {
  /** The A2A task id (`call_<hex>`) it is for (the path's or the params'; a SendMessage's: its task). */
  taskId: string;
  configId: string;
  url: string;
  headers: PushHeaders;
  /** Made over A2A 0.3 (compat-v03.ts; A2aPush.prepare says): its deliveries carry 0.3's body, the Task. */
  legacy?: boolean;
}

const CONFIG_ID = /^[\x21-\x7e]{1,255}$/;
/** RFC 9110 token: an auth scheme. */
const SCHEME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** Visible ASCII and spaces only: no CR/LF can split a header. */
const HEADER_VALUE = /^[\x20-\x7e]{1,4096}$/;

/**
 * `TaskPushNotificationConfig` (A2A 1.0): `url`, optional `id` (`defaultId`
 * when absent: a new UUID, as the SDK's server does), `token`, `authentication: {scheme,
 * credentials}`. Never a throw; a value that would not make a clean header is refused.
 */
export function parsePushConfig(
  value: unknown,
  taskId: string,
  defaultId: string = randomUUID(),
): { ok: true; config: PushConfigInput } | { ok: false; detail: string } {
  if (!isObject(value)) return { ok: false, detail: 'the push notification config must be an object' };
  const { id, url, token, authentication } = value;
  if (typeof url !== 'string' || url.length === 0) return { ok: false, detail: 'url must name the receiver' };
  if (id !== undefined && id !== '' && (typeof id !== 'string' || !CONFIG_ID.test(id)))
    return { ok: false, detail: 'id must be 1-255 visible ASCII characters' };
  if (token !== undefined && token !== '' && (typeof token !== 'string' || !HEADER_VALUE.test(token)))
    return { ok: false, detail: 'token must be 1-4096 visible ASCII characters' };
  const headers: PushHeaders = {};
  if (typeof token === 'string' && token) headers.token = token;
  if (authentication !== undefined && authentication !== null) {
    if (!isObject(authentication)) return { ok: false, detail: 'authentication must be an object' };
    const { scheme, credentials } = authentication;
    if (typeof scheme !== 'string' || !SCHEME.test(scheme))
      return { ok: false, detail: 'authentication.scheme must be an HTTP auth scheme (e.g. Bearer)' };
    if (
      credentials !== undefined &&
      credentials !== '' &&
      (typeof credentials !== 'string' || !HEADER_VALUE.test(credentials))
    )
      return { ok: false, detail: 'authentication.credentials must be 1-4096 visible ASCII characters' };
    headers.authorization = typeof credentials === 'string' && credentials ? `${scheme} ${credentials}` : scheme;
  }
  return {
    ok: true,
    config: { taskId, configId: typeof id === 'string' && id ? id : defaultId, url, headers },
  };
}

/**
 * A stored config as the client reads it back: its id, task, URL and the
 * scheme of its authentication. The credentials and the token are write-only
 * (sealed at rest, sent only to the receiver).
 */
export function wireConfig(taskId: string, stored: StoredConfig) {
  return {
    id: stored.configId,
    taskId,
    url: stored.url,
    ...(stored.scheme && { authentication: { scheme: stored.scheme } }),
  };
}

import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';

export interface SendResult {
  /** The HTTP status, when a response came. */
  status?: number;
  /** Why no response came (connection refused, timeout…). */
  error?: string;
  /** The response's Retry-After, in ms, when it has one (429, 503). */
  retryAfterMs?: number;
  durationMs: number;
  /** Nothing was sent (the address was refused, the secret does not open): it says nothing of the receiver. */
  notSent?: true;
}

/** Bytes of a receiver's response read at most (the rest is dropped): a receiver cannot hold the replica's memory. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * One POST to a webhook URL, connected to `address`: the address the SSRF
 * guard checked, never resolved again (the URL's host still goes in `Host` and
 * TLS SNI). No redirects are followed.
 */
export function sendWebhook(
  url: URL,
  address: { address: string; family: 4 | 6 },
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<SendResult> {
  const started = performance.now();
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) {
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [address]);
    } else callback(null, address.address, address.family);
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const done = (result: Omit<SendResult, 'durationMs'>) =>
      resolve({ ...result, durationMs: Math.round(performance.now() - started) });
    const req = send(
      url,
      {
        method: 'POST',
        lookup: pinned,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        signal: AbortSignal.timeout(timeoutMs),
      },
      (res: IncomingMessage) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        const status = res.statusCode ?? 0;
        const settle = () => done({ status, retryAfterMs: retryAfter(res.headers['retry-after']) });
        res.on('end', settle);
        res.on('close', settle);
        res.on('error', settle);
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) =>
      done({ error: error.name === 'AbortError' ? `timeout after ${timeoutMs} ms` : (error.code ?? error.message) }),
    );
    req.end(body);
  });
}

/** Retry-After as seconds or an HTTP date, in ms from now. */
function retryAfter(value: string | undefined): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

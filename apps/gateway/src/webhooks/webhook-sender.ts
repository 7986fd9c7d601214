import type { LookupFunction } from 'node:net';
import { Pool } from 'undici';

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
/** Connection pools kept (one per receiver origin and checked address); the oldest is closed past this. */
const MAX_POOLS = 256;
/** Connections one pool keeps to one receiver (WEBHOOK_ENDPOINT_CONCURRENCY bounds what is sent at once). */
const POOL_CONNECTIONS = 64;

/**
 * Keep-alive connection pools (undici) by receiver origin and the address the
 * SSRF guard checked: a pool connects only to that address (a pinned lookup;
 * the URL's host still goes in `Host` and TLS SNI), so a DNS answer that
 * changes later opens a new pool, checked again, never a connection to an
 * address nobody checked. undici costs a fraction of node:http's client per
 * request (measured: about 15 µs against 100 µs on this machine), which is what
 * a webhook at the rate of the calls needs.
 */
const pools = new Map<string, Pool>();

function poolFor(url: URL, address: { address: string; family: 4 | 6 }): Pool {
  const key = `${url.origin} ${address.address}`;
  let pool = pools.get(key);
  if (pool) return pool;
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) {
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [address]);
    } else callback(null, address.address, address.family);
  };
  pool = new Pool(url.origin, { connections: POOL_CONNECTIONS, connect: { lookup: pinned }, keepAliveTimeout: 10_000 });
  pools.set(key, pool);
  if (pools.size > MAX_POOLS) {
    const [oldestKey, oldest] = pools.entries().next().value as [string, Pool];
    pools.delete(oldestKey);
    void oldest.close().catch(() => undefined);
  }
  return pool;
}

/**
 * One POST to a webhook URL, connected to `address`: the address the SSRF
 * guard checked, never resolved again. No redirects are followed. The whole
 * attempt (connect, send, response) is cut at `timeoutMs`.
 *
 * Through undici's `dispatch` with a handler of our own, not `request`: the
 * status and `Retry-After` are all an attempt reads, so no response object,
 * body stream or AbortSignal is made (measured on this machine: 0.04 against
 * 0.075 ms of the sender's CPU per POST, docs/benchmarks.md). The body is
 * read and dropped; past MAX_RESPONSE_BYTES the connection is cut.
 */
export function sendWebhook(
  url: URL,
  address: { address: string; family: 4 | 6 },
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<SendResult> {
  const started = performance.now();
  return new Promise<SendResult>((resolve) => {
    let status: number | undefined;
    let retryAfterMs: number | undefined;
    let received = 0;
    let abort: ((error: Error) => void) | undefined;
    let timedOut = false;
    const finish = (result: Omit<SendResult, 'durationMs'>): void => {
      clearTimeout(timer);
      resolve({ ...result, durationMs: Math.round(performance.now() - started) });
    };
    const timeout = { error: `timeout after ${timeoutMs} ms` };
    const timer = setTimeout(() => {
      timedOut = true;
      if (abort) abort(new Error('timeout'));
      else finish(timeout);
    }, timeoutMs);
    const answered = () => ({ status, retryAfterMs });
    try {
      poolFor(url, address).dispatch(
        {
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers,
          body,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        },
        {
          onConnect(cut) {
            abort = cut;
            if (timedOut) cut(new Error('timeout'));
          },
          onHeaders(code, raw) {
            // 1xx are interim answers; the final one follows.
            if (code < 200) return true;
            status = code;
            retryAfterMs = retryAfter(headerOf(raw, 'retry-after'));
            return true;
          },
          onData(chunk) {
            received += chunk.length;
            // A receiver cannot hold the replica's memory or connection: its answer is what counts.
            if (received > MAX_RESPONSE_BYTES) abort?.(new Error('response too large'));
            return true;
          },
          onComplete() {
            finish(answered());
          },
          onError(error) {
            // An answer that stops halfway (or was cut for its size) still answered.
            if (status !== undefined) return finish(answered());
            if (timedOut) return finish(timeout);
            const failure = error as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
            finish({ error: failure.code ?? failure.cause?.code ?? failure.message });
          },
        },
      );
    } catch (error) {
      finish({ error: (error as Error).message });
    }
  });
}

/** A header's value from undici's raw list (name, value, name, value…), or undefined. */
function headerOf(raw: Buffer[] | string[] | null, name: string): string | undefined {
  if (!raw) return undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i].toString().toLowerCase() === name) return raw[i + 1].toString();
  }
  return undefined;
}

/** Close every pool (the dispatcher's shutdown). */
export async function closeWebhookPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((pool) => pool.close().catch(() => undefined)));
}

/** Retry-After as seconds or an HTTP date, in ms from now. */
function retryAfter(value: string | undefined): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

import { request, type ClientRequest, type IncomingMessage } from 'node:http';

/**
 * Plain HTTP to the gateway's MCP endpoint (surface A, a session revision), one
 * socket per request (`agent: false`): many sessions opened, and many streams
 * held open at once, for what each costs the gateway.
 */
export const SESSION_VERSION = '2025-11-25';

export interface Endpoint {
  url: URL;
  apiKey: string;
}

function headers(endpoint: Endpoint, session?: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'x-agent-api-key': endpoint.apiKey,
    'mcp-protocol-version': SESSION_VERSION,
    ...(session ? { 'mcp-session-id': session } : {}),
  };
}

/** A request whose response is read to its end. */
function exchange(
  endpoint: Endpoint,
  method: string,
  session: string | undefined,
  body?: unknown,
): Promise<{ status: number; session?: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(endpoint.url, { method, headers: headers(endpoint, session), agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, session: res.headers['mcp-session-id'] as string | undefined, text }),
      );
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${endpoint.url}: no answer in 30 s`)));
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** `initialize` and `notifications/initialized`: a session, as an MCP client opens it. */
export async function openSession(endpoint: Endpoint, n: number): Promise<string> {
  const init = await exchange(endpoint, 'POST', undefined, {
    jsonrpc: '2.0',
    id: n,
    method: 'initialize',
    params: { protocolVersion: SESSION_VERSION, capabilities: {}, clientInfo: { name: 'bench-memory', version: '1' } },
  });
  if (init.status !== 200 || !init.session) throw new Error(`initialize: ${init.status} ${init.text.slice(0, 200)}`);
  const ack = await exchange(endpoint, 'POST', init.session, { jsonrpc: '2.0', method: 'notifications/initialized' });
  if (ack.status !== 202) throw new Error(`notifications/initialized: ${ack.status} ${ack.text.slice(0, 200)}`);
  return init.session;
}

/** A response held open: its status and headers arrived, its body has not ended. */
export interface HeldStream {
  status: number;
  close(): void;
}

/**
 * Resolves once the response's headers and first bytes arrived (an SSE stream
 * primes with an event), leaving it open until `close()`.
 */
function hold(endpoint: Endpoint, method: string, session: string, body?: unknown): Promise<HeldStream> {
  return new Promise((resolve, reject) => {
    let req: ClientRequest | undefined = undefined;
    const onResponse = (res: IncomingMessage) => {
      const held = { status: res.statusCode ?? 0, close: () => req!.destroy() };
      if (held.status !== 200) {
        res.resume();
        return reject(new Error(`${method} stream: ${held.status}`));
      }
      res.once('data', () => resolve(held));
      res.once('end', () => reject(new Error(`${method} stream ended before it was held`)));
    };
    req = request(endpoint.url, { method, headers: headers(endpoint, session), agent: false }, onResponse);
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The session's GET stream (server-to-client notifications), held open. */
export function openListenStream(endpoint: Endpoint, session: string): Promise<HeldStream> {
  return hold(endpoint, 'GET', session);
}

/**
 * A call in flight: `sleep` for `ms` with progress every `progressMs`, its response an
 * SSE stream (the progress token asks for one) held open until `close()` (which cancels it).
 */
export function openCallStream(
  endpoint: Endpoint,
  session: string,
  n: number,
  ms: number,
  progressMs: number,
): Promise<HeldStream> {
  return hold(endpoint, 'POST', session, {
    jsonrpc: '2.0',
    id: `held-${n}`,
    method: 'tools/call',
    params: { name: 'sleep', arguments: { ms, progress_every_ms: progressMs }, _meta: { progressToken: `p-${n}` } },
  });
}

/** `work(i)` for i in 0..count-1, `width` at a time. */
export async function inBatches<T>(count: number, width: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await work(i);
      }
    }),
  );
  return results;
}

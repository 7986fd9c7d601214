import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Which call a Streamable HTTP server's request to its client (sampling,
 * elicitation, roots) arrived under. The server sends a request related to
 * one of its client's requests on the SSE stream answering that request's
 * POST (MCP Streamable HTTP); the SDK client hands it to its handler without
 * a word of the stream (`extra` has the server's request id only). So the
 * transport's `fetch`, wrapped here, reads the response stream of each POST
 * a call makes on the way through and notes the id of every server request on
 * it under that call, before the SDK client parses it.
 */
export class RelatedRequests<Call extends object> {
  /** The call whose request to the server is being sent (its POST is made in this context). */
  private readonly sending = new AsyncLocalStorage<Call>();
  /**
   * Each noted request, until its handler takes it: kept after its call ends
   * (the handler may run later and must still hear it was that call's).
   */
  private readonly arrivedUnder = new Map<RequestId, Call>();

  /** `methods`: the server requests the client handles (each one noted is taken by its handler). */
  constructor(private readonly methods: readonly string[]) {}

  /** Send the call's request to the server: server requests on its response stream are the call's. */
  within<T>(call: Call, request: () => Promise<T>): Promise<T> {
    return this.sending.run(call, request);
  }

  /** The call the server's request arrived under, if on a call's response stream (told once). */
  take(serverRequestId: RequestId): Call | undefined {
    const call = this.arrivedUnder.get(serverRequestId);
    this.arrivedUnder.delete(serverRequestId);
    return call;
  }

  /** A `fetch` for `StreamableHTTPClientTransport`: notes the server requests on each call's response stream. */
  fetch(base: FetchLike = fetch): FetchLike {
    return async (url, init) => {
      const response = await base(url, init);
      const call = this.sending.getStore();
      const streamed = response.headers.get('content-type')?.split(';')[0].trim() === 'text/event-stream';
      if (!call || init?.method !== 'POST' || !response.ok || !streamed || !response.body) return response;
      const noted = response.body.pipeThrough(
        sseData((data) => {
          const id = this.serverRequestId(data);
          if (id !== undefined) this.arrivedUnder.set(id, call);
        }),
      );
      return new Response(noted, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    };
  }

  /** The id of a request of the server in an event's data, if it is one the client handles. */
  private serverRequestId(data: string): RequestId | undefined {
    try {
      const message = JSON.parse(data) as { jsonrpc?: unknown; method?: unknown; id?: unknown };
      if (message.jsonrpc !== '2.0' || !this.methods.includes(message.method as string)) return undefined;
      return typeof message.id === 'string' || typeof message.id === 'number' ? message.id : undefined;
    } catch {
      return undefined; // not JSON: the SDK client reports it
    }
  }
}

/**
 * Passes an SSE byte stream through unchanged, telling `onData` the data of
 * each message event (no `event` field, or `message`) before the chunk that
 * ends it goes on: the SDK client, reading downstream, sees it after.
 * https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
 */
export function sseData(onData: (data: string) => void): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  let pending = '';
  let data: string[] = [];
  let event = '';
  const line = (text: string) => {
    if (text === '') {
      if (data.length > 0 && (event === '' || event === 'message')) onData(data.join('\n'));
      data = [];
      event = '';
      return;
    }
    const colon = text.indexOf(':');
    if (colon === 0) return; // a comment
    const field = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? '' : text.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
  };
  return new TransformStream({
    transform(chunk, controller) {
      pending += decoder.decode(chunk, { stream: true });
      // A CR at the end may be the first half of a CRLF: keep it for the next chunk.
      const complete = pending.endsWith('\r') ? pending.length - 1 : pending.length;
      const lines = pending.slice(0, complete).split(/\r\n|\r|\n/);
      pending = lines.pop()! + pending.slice(complete);
      lines.forEach(line);
      controller.enqueue(chunk);
    },
  });
}

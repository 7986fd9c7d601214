import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelatedRequests, sseData } from './related-requests';

/** The bytes through `sseData`, in the chunks given: the data it told of, and what came out. */
async function through(chunks: string[]): Promise<{ told: string[]; out: string }> {
  const told: string[] = [];
  const encoder = new TextEncoder();
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
  const out = await new Response(source.pipeThrough(sseData((data) => told.push(data)))).text();
  return { told, out };
}

describe('sseData: the data of each message event, the bytes unchanged', () => {
  it('joins data lines, skips comments and other event types, and takes CRLF split across chunks as one line end', async () => {
    const chunks = [
      ': hello\r\n\r\n',
      'data: {"a"',
      ':1}\r',
      '\ndata: 2\r',
      '\n\r',
      '\nevent: ping\ndata: x\n\ndata:one\ndata: two\n\n',
    ];
    const { told, out } = await through(chunks);
    expect(told).toEqual(['{"a":1}\n2', 'one\ntwo']);
    expect(out).toBe(chunks.join(''));
  });
});

describe('RelatedRequests: the server requests on the response stream of a POST made within a call', () => {
  let url: string;
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const request = (id: number, method: string) => `data: ${JSON.stringify({ jsonrpc: '2.0', id, method })}\n\n`;
    res.end(request(7, 'elicitation/create') + request(8, 'ping') + request(9, 'roots/list'));
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('notes the requests of the methods handled under the call, once each; outside a call, none', async () => {
    const related = new RelatedRequests<{ name: string }>(['elicitation/create', 'roots/list']);
    const fetch = related.fetch();
    const call = { name: 'A' };
    await related.within(call, async () => (await fetch(url, { method: 'POST', body: '{}' })).text());
    expect(related.take(7)).toBe(call);
    expect(related.take(7)).toBeUndefined();
    expect(related.take(8)).toBeUndefined(); // a method the client does not handle
    expect(related.take(9)).toBe(call);
    await (await fetch(url, { method: 'POST', body: '{}' })).text();
    expect(related.take(7)).toBeUndefined();
  });
});

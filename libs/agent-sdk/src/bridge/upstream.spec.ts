import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentLogger } from '../logger';
import { describeServer, Upstream } from './upstream';

/** Every line logged, as JSON. */
function capturingLogger(): AgentLogger & { lines: string[] } {
  const lines: string[] = [];
  const note = (message: unknown) => void lines.push(JSON.stringify(message));
  return { lines, debug: note, log: note, warn: note, error: note };
}

describe('describeServer: the server as logs name it', () => {
  it('shows neither the userinfo nor the query of a URL, nor its fragment', () => {
    const described = describeServer({ kind: 'http', url: 'https://user:tok@host/mcp?token=abc#frag', headers: {} });
    expect(described).toBe('https://host/mcp?…');
    expect(described).not.toMatch(/user|tok|abc|frag/);
    expect(describeServer({ kind: 'http', url: 'https://host:8443/mcp', headers: {} })).toBe('https://host:8443/mcp');
  });
});

describe('Upstream over Streamable HTTP: a URL with credentials', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());

  it("sends the URL's user:password as Basic credentials, and logs neither them nor the query", async () => {
    const authorizations: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      authorizations.push(req.headers.authorization);
      const mcp = new McpServer({ name: 'plain', version: '1.0.0' });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void mcp.close());
      void mcp.connect(transport).then(() => transport.handleRequest(req, res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    close = () => new Promise<void>((resolve) => server.close(() => resolve()));
    const { port } = server.address() as AddressInfo;
    const logger = capturingLogger();
    const upstream = new Upstream(
      { kind: 'http', url: `http://user:tok@127.0.0.1:${port}/mcp?token=abc`, headers: {} },
      { configure: () => undefined, connected: async () => undefined },
      logger,
    );
    const connected = await Promise.race([upstream.client().then(() => true), delay(3_000, false)]);
    await upstream.stop();
    for (const line of logger.lines) expect(line).not.toMatch(/tok|abc/);
    expect(connected).toBe(true);
    expect(authorizations[0]).toBe(`Basic ${Buffer.from('user:tok').toString('base64')}`);
    expect(logger.lines.some((line) => line.includes('connected to the MCP server'))).toBe(true);
  });
});

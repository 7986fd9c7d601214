import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { registerEcho } from './echo-tool';

/**
 * `node sdk-server.js <stateless|stateful> <port>`: the bare SDK server (b1, b2)
 * on node:http at /mcp. Stateless follows the SDK's example: a server and a
 * transport per request. Stateful keeps one per session, in memory.
 */
const [mode, port] = [process.argv[2], Number(process.argv[3])];

function newServer(): McpServer {
  const server = new McpServer({ name: `bench-sdk-${mode}`, version: '1.0.0' });
  registerEcho(server);
  return server;
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      try {
        resolve(body ? JSON.parse(body) : undefined);
      } catch (error) {
        reject(error);
      }
    });
    req.on('error', reject);
  });
}

function fail(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function stateless(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') return fail(res, 405, 'Method not allowed.');
  const body = await readJson(req);
  const server = newServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

const sessions = new Map<string, StreamableHTTPServerTransport>();

async function stateful(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const sessionId = req.headers['mcp-session-id'];
  const body = req.method === 'POST' ? await readJson(req) : undefined;
  let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
  if (!transport) {
    if (sessionId || !isInitializeRequest(body))
      return fail(res, sessionId ? 404 : 400, 'Bad Request: no valid session');
    const created = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, created),
    });
    created.onclose = () => {
      if (created.sessionId) sessions.delete(created.sessionId);
    };
    await newServer().connect(created);
    transport = created;
  }
  await transport.handleRequest(req, res, body);
}

const handle = mode === 'stateful' ? stateful : stateless;
createServer((req, res) => {
  if (!req.url?.startsWith('/mcp')) return fail(res, 404, 'Not found');
  handle(req, res).catch((error: Error) => {
    if (!res.headersSent) fail(res, 500, error.message);
  });
}).listen(port, '127.0.0.1');

import type { Agent } from 'node:http';
import { httpSend, type HttpAnswer } from './http-send';

/** Where and how the load generator talks to a system under test. */
export interface Target {
  /** The MCP endpoint, e.g. http://127.0.0.1:3000/demo-agent/mcp */
  url: string;
  /** Extra headers on every request (the stack's X-Agent-API-Key). */
  headers: Record<string, string>;
  /** initialize + notifications/initialized first, then carry Mcp-Session-Id. */
  stateful: boolean;
  /**
   * `url` speaks another dialect than MCP: a REST invoke (`POST /api/v1/agents/{agent_id}/invoke`)
   * or A2A's JSON-RPC binding (`POST /a2a/{agent_id}`).
   */
  dialect?: 'rest' | 'a2a';
}

const PROTOCOL_VERSION = '2025-06-18';

/**
 * One simulated MCP client over node:http keep-alive: no SDK, so the client
 * costs the same few microseconds for every system under test.
 */
export class LeanMcpClient {
  private sessionId?: string;
  private nextId = 1;
  private readonly url: URL;

  constructor(
    private readonly target: Target,
    private readonly agent: Agent,
  ) {
    this.url = new URL(target.url);
  }

  async initialize(): Promise<void> {
    if (!this.target.stateful) return;
    const answer = await this.post({
      jsonrpc: '2.0',
      id: this.nextId++,
      method: 'initialize',
      params: {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'mcpgw-bench', version: '1.0.0' },
      },
    });
    const session = answer.headers['mcp-session-id'];
    if (answer.status !== 200 || typeof session !== 'string') {
      throw new Error(`initialize: HTTP ${answer.status}, session ${String(session)}: ${answer.body.slice(0, 200)}`);
    }
    this.sessionId = session;
    const initialized = await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    if (initialized.status !== 202 && initialized.status !== 200)
      throw new Error(`notifications/initialized: HTTP ${initialized.status}`);
  }

  /** One tools/call; resolves to undefined on success, or what went wrong. */
  async callTool(name: string, args: Record<string, unknown>, expectText?: string): Promise<string | undefined> {
    const id = this.nextId++;
    const answer = await this.post({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    if (answer.status !== 200) return `HTTP ${answer.status}`;
    const message = findResponse(answer, id);
    if (!message) return 'no JSON-RPC response in the body';
    if (message.error) return `JSON-RPC error ${message.error.code}`;
    if (message.result?.isError) return 'result.isError';
    if (expectText !== undefined && message.result?.content?.[0]?.text !== expectText) return 'wrong echo';
    return undefined;
  }

  /** DELETE the session, as a well-behaved client does at the end. */
  async close(): Promise<void> {
    if (!this.sessionId) return;
    await this.send('DELETE', undefined).catch(() => undefined);
  }

  private post(message: unknown): Promise<HttpAnswer> {
    return this.send('POST', JSON.stringify(message));
  }

  private send(method: 'POST' | 'DELETE', body: string | undefined): Promise<HttpAnswer> {
    const headers: Record<string, string> = {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL_VERSION,
      ...this.target.headers,
    };
    if (this.sessionId) headers['mcp-session-id'] = this.sessionId;
    return httpSend(this.url, this.agent, method, headers, body);
  }
}

interface JsonRpcResponse {
  id?: unknown;
  error?: { code: number; message: string };
  result?: { isError?: boolean; content?: { type: string; text?: string }[] };
}

/** The response to `id`, from a JSON body or from the `data:` lines of an SSE body. */
export function findResponse(answer: HttpAnswer, id: number): JsonRpcResponse | undefined {
  const type = String(answer.headers['content-type'] ?? '');
  const candidates: unknown[] = [];
  try {
    if (type.includes('text/event-stream')) {
      for (const line of answer.body.split('\n')) {
        if (line.startsWith('data:')) candidates.push(JSON.parse(line.slice(5)));
      }
    } else {
      const parsed: unknown = JSON.parse(answer.body);
      candidates.push(...(Array.isArray(parsed) ? parsed : [parsed]));
    }
  } catch {
    return undefined;
  }
  return (candidates as JsonRpcResponse[]).find((m) => m && m.id === id && ('result' in m || 'error' in m));
}

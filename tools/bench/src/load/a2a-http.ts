import { randomUUID } from 'node:crypto';
import type { Agent } from 'node:http';
import { httpSend } from './http-send';
import type { Target } from './mcp-http';

/**
 * One simulated A2A 1.0 client (`POST /a2a/{agent_id}`, JSON-RPC binding):
 * `SendMessage` naming the skill in the message's metadata, the arguments as
 * a data part, a fresh `messageId` each (the gateway's idempotency key for
 * A2A); the answer is the agent's message, its first part the echoed text.
 * The twin of LeanMcpClient and LeanRestClient: no session, one request a call.
 */
export class LeanA2aClient {
  private readonly url: URL;
  private nextId = 1;

  constructor(
    private readonly target: Target,
    private readonly agent: Agent,
  ) {
    this.url = new URL(target.url);
  }

  /** A2A has no session to open. */
  async initialize(): Promise<void> {}

  /** One SendMessage; resolves to undefined on success, or what went wrong. */
  async callTool(name: string, args: Record<string, unknown>, expectText?: string): Promise<string | undefined> {
    const id = this.nextId++;
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'SendMessage',
      params: {
        message: { messageId: randomUUID(), role: 'ROLE_USER', metadata: { skill: name }, parts: [{ data: args }] },
      },
    });
    const headers = { accept: 'application/json', 'a2a-version': '1.0', ...this.target.headers };
    const answer = await httpSend(this.url, this.agent, 'POST', headers, body);
    if (answer.status !== 200) return `HTTP ${answer.status}`;
    let response: { id?: unknown; error?: { code: number }; result?: { message?: { parts?: { text?: string }[] } } };
    try {
      response = JSON.parse(answer.body) as typeof response;
    } catch {
      return 'not JSON';
    }
    if (response.id !== id) return 'no JSON-RPC response to the request';
    if (response.error) return `JSON-RPC error ${response.error.code}`;
    const parts = response.result?.message?.parts;
    if (!parts) return 'no message in the result';
    if (expectText !== undefined && parts[0]?.text !== expectText) return 'wrong echo';
    return undefined;
  }

  async close(): Promise<void> {}
}

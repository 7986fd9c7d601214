import type { Agent } from 'node:http';
import { httpSend } from './http-send';
import type { Target } from './mcp-http';

/**
 * One simulated REST client (`POST /api/v1/agents/{agent_id}/invoke`) over
 * node:http keep-alive, the twin of LeanMcpClient: no session, one request a
 * call, so it costs the load generator the same few microseconds.
 */
export class LeanRestClient {
  private readonly url: URL;

  constructor(
    private readonly target: Target,
    private readonly agent: Agent,
  ) {
    this.url = new URL(target.url);
  }

  /** REST has no session to open. */
  async initialize(): Promise<void> {}

  /** One invoke; resolves to undefined on success, or what went wrong. */
  async callTool(name: string, args: Record<string, unknown>, expectText?: string): Promise<string | undefined> {
    const body = JSON.stringify({ tool: name, arguments: args });
    const answer = await httpSend(
      this.url,
      this.agent,
      'POST',
      { accept: 'application/json', ...this.target.headers },
      body,
    );
    if (answer.status !== 200) return `HTTP ${answer.status}`;
    let result: { is_error?: boolean; content?: { text?: string }[] };
    try {
      result = JSON.parse(answer.body) as typeof result;
    } catch {
      return 'not JSON';
    }
    if (result.is_error) return 'is_error';
    if (expectText !== undefined && result.content?.[0]?.text !== expectText) return 'wrong echo';
    return undefined;
  }

  async close(): Promise<void> {}
}

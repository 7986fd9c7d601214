import { ErrorCode, McpError, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { SkillContext } from '../skills/skill';
import { RelatedRequests } from './related-requests';

/**
 * The calls running on the MCP server, and whose a request or log line of the
 * server is (README.md here, "Whose question it is"). A question (sampling,
 * elicitation, roots) goes to the call it arrived under (Streamable HTTP says
 * which); one that arrived under none (stdio never says) goes to the call
 * running if it is the only one, and is otherwise refused: never to a caller
 * it may not belong to.
 */
export class CallsInFlight {
  readonly related: RelatedRequests<SkillContext>;
  private readonly running: SkillContext[] = [];

  /** `questions`: the methods of the server's requests to its client that the bridge passes on. */
  constructor(questions: readonly string[]) {
    this.related = new RelatedRequests(questions);
  }

  /** Make the call's request to the server; its questions are the call's while it runs. */
  async run<T>(call: SkillContext, request: () => Promise<T>): Promise<T> {
    this.running.push(call);
    try {
      return await this.related.within(call, request);
    } finally {
      this.running.splice(this.running.indexOf(call), 1);
    }
  }

  /** The call a request of the server to its client is for; an `McpError` to the server if none is surely. */
  asking(method: string, serverRequestId: RequestId): SkillContext {
    const under = this.related.take(serverRequestId);
    if (under) {
      if (this.running.includes(under)) return under;
      throw new McpError(ErrorCode.InvalidRequest, `${method}: the call it was sent under is over`);
    }
    if (this.running.length === 1) return this.running[0];
    throw new McpError(
      ErrorCode.InvalidRequest,
      this.running.length === 0
        ? `${method}: no call is running to ask the client through`
        : `${method}: ${this.running.length} calls are running and the request is related to none of them: refused rather than asked of the wrong caller`,
    );
  }

  /** The call a log line is for: the only one running (no transport says whose a log line is), else none. */
  logging(): SkillContext | undefined {
    return this.running.length === 1 ? this.running[0] : undefined;
  }
}

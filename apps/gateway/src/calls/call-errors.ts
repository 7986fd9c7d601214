/**
 * What can go wrong in the call pipeline, as types. The pipeline throws these
 * and nothing else; each MCP surface maps them to its own wire codes in one
 * function (mcp/agent-surface/errors.ts for surface A).
 */
export abstract class CallError extends Error {
  abstract readonly kind: string;
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export class ToolNotFoundError extends CallError {
  readonly kind = 'tool_not_found';
  constructor(readonly tool: string) {
    super(`Tool not found: ${tool} (see tools/list)`);
  }
}

export class InvalidArgumentsError extends CallError {
  readonly kind = 'invalid_arguments';
  constructor(
    readonly tool: string,
    readonly problems: string[],
  ) {
    super(`Invalid arguments for ${tool} (see its inputSchema): ${problems.join('; ')}`);
  }
}

export class AgentTimeoutError extends CallError {
  readonly kind = 'agent_timeout';
  constructor(readonly timeoutMs: number) {
    super('Agent reply timeout');
  }
}

/** The bus, the message service or the agent's inbox cannot be reached. */
export class BackendUnavailableError extends CallError {
  readonly kind = 'backend_unavailable';
}

/**
 * The call names a conversation (a session's channel, a conversation handle)
 * whose channel retention deleted (apps/message-service/src/retention/README.md).
 */
export class ConversationGoneError extends CallError {
  readonly kind = 'conversation_gone';
  constructor() {
    super(
      'This conversation has expired: its messages were deleted after the retention period. Start a new session, or call without the conversation handle.',
    );
  }
}

export class InternalCallError extends CallError {
  readonly kind = 'internal';
}

/** The idempotency key was used before with another tool or other arguments. */
export class IdempotencyKeyReusedError extends CallError {
  readonly kind = 'idempotency_key_reused';
  constructor(readonly key: string) {
    super(`idempotency_key ${JSON.stringify(key)} was already used with a different tool or arguments`);
  }
}

/** The client cancelled the call; the agent was told to stop. No result is sent. */
export class CallCancelledError extends CallError {
  readonly kind = 'cancelled';
  constructor() {
    super('Request cancelled');
  }
}

/**
 * The request stopped waiting because the agent asked the client something
 * (MRTR, mcp/input-required): the call is still in flight on the bus, and the
 * client's retry continues it. Not a failure: the surface answers `input_required`.
 */
export class CallDetachedError extends CallError {
  readonly kind = 'input_required';
  constructor() {
    super('The agent needs input from the client');
  }
}

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { ClientRequestMethod, ContentItem, LogLevel, SkillDefinition } from '@mcpgw/contracts';
import { createAgent, type Agent, type AgentOptions } from '../agent';
import { jsonLinesLogger, type AgentLogger } from '../logger';
import type { PromptProvider, ResourceProvider } from '../skills/catalogue';
import { RedeliverError, ToolError, type Skill, type SkillOutput } from '../skills/skill';
import { CallsInFlight } from './calls-in-flight';
import { readCatalogue, type ServerCatalogue } from './catalogue';
import { Upstream, type UpstreamSpec } from './upstream';

/** A call's time when the gateway gave none (it always does): the MCP SDK's own default is 60 s. */
const NO_DEADLINE_TIMEOUT_MS = 10 * 60_000;

/** The server's requests to its client that the bridge passes on, each to the MCP client of the call it is for. */
const QUESTIONS = [
  'sampling/createMessage',
  'elicitation/create',
  'roots/list',
] as const satisfies readonly ClientRequestMethod[];

export interface BridgeOptions extends Omit<AgentOptions, 'skills' | 'resources' | 'prompts'> {
  /** The MCP server: a command (stdio) or a Streamable HTTP URL with headers. */
  upstream: UpstreamSpec;
}

/**
 * Any MCP server as a bus agent (README.md here): its tools, resources,
 * templates and prompts become the agent's catalogue, registered again when
 * the server says a list changed; each call on the bus becomes the same
 * request on the server, with its progress, logs, questions to the client,
 * cancellation and deadline carried across.
 */
export class Bridge {
  readonly agent: Agent;
  private readonly logger: AgentLogger;
  private readonly upstream: Upstream;
  /** The calls running on the server now: whom its logs and questions are for. */
  private readonly calls = new CallsInFlight(QUESTIONS);
  /** The resources subscribed to on each connection (a restarted server knows none). */
  private readonly subscribed = new WeakMap<Client, Set<string>>();
  private started = false;

  constructor(private readonly options: BridgeOptions) {
    this.logger = options.logger ?? jsonLinesLogger(`bridge ${options.agentId}`);
    this.upstream = new Upstream(
      options.upstream,
      {
        configure: (client) => this.configure(client),
        connected: (client) => this.connected(client),
        fetch: this.calls.related.fetch(),
      },
      this.logger,
    );
    this.agent = createAgent({ ...options, logger: this.logger, skills: [] });
  }

  /** Connect to the server, read its catalogue, and serve it on the bus. */
  async start(): Promise<void> {
    await this.serve(await this.upstream.client());
    this.started = true;
    await this.agent.start();
  }

  async stop(): Promise<void> {
    await this.agent.stop();
    await this.upstream.stop();
  }

  /** Each new connection (a restarted server too): its catalogue may have changed. */
  private async connected(client: Client): Promise<void> {
    if (!this.started) return; // start() reads it
    await this.serve(client);
  }

  /** Read the server's lists, register them, and subscribe to the resources listed. */
  private async serve(client: Client): Promise<void> {
    const catalogue = await readCatalogue(client);
    await this.agent.update(this.agentCatalogue(catalogue));
    if (catalogue.subscribe) await this.subscribe(client, catalogue);
  }

  /**
   * Every listed resource, subscribed to once per connection: clients subscribe
   * at the gateway, which passes each update on only to those subscribed. A
   * URI of a template is not subscribed (the bridge does not hear which ones
   * clients watch).
   */
  private async subscribe(client: Client, catalogue: ServerCatalogue): Promise<void> {
    let done = this.subscribed.get(client);
    if (!done) this.subscribed.set(client, (done = new Set()));
    for (const { uri } of catalogue.resources) {
      if (done.has(uri)) continue;
      done.add(uri);
      await client.subscribeResource({ uri }).catch((error: Error) => {
        done.delete(uri);
        this.logger.warn({ msg: 'subscribing to a resource failed', uri, error: error.message });
      });
    }
  }

  private configure(client: Client): void {
    // The server asks its client: the call it is for asks the MCP client at the gateway, or it is refused.
    const ask =
      (method: (typeof QUESTIONS)[number]) =>
      async (request: { params?: Record<string, unknown> }, extra: { requestId: RequestId }) => {
        const call = this.calls.asking(method, extra.requestId);
        const { _meta: _dropped, ...params } = request.params ?? {};
        return call.ask(method, params) as never;
      };
    client.setRequestHandler(CreateMessageRequestSchema, ask('sampling/createMessage'));
    client.setRequestHandler(ElicitRequestSchema, ask('elicitation/create'));
    client.setRequestHandler(ListRootsRequestSchema, ask('roots/list'));
    client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
      // No transport says which request a log line belongs to: it goes to the call when only one runs.
      this.calls.logging()?.log(params.level as LogLevel, params.data, params.logger);
    });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, ({ params }) =>
      this.agent.resourceUpdated(params.uri),
    );
    const relist = () => void this.relist(client);
    client.setNotificationHandler(ToolListChangedNotificationSchema, relist);
    client.setNotificationHandler(ResourceListChangedNotificationSchema, relist);
    client.setNotificationHandler(PromptListChangedNotificationSchema, relist);
  }

  private async relist(client: Client): Promise<void> {
    try {
      await this.serve(client);
    } catch (error) {
      this.logger.warn({ msg: 'registering the changed lists failed', error: (error as Error).message });
    }
  }

  private agentCatalogue(server: ServerCatalogue): {
    skills: Skill[];
    resources: ResourceProvider;
    prompts: PromptProvider;
  } {
    const complete =
      (type: 'ref/prompt' | 'ref/resource') =>
      async (ref: string, argument: { name: string; value: string }, resolved: Record<string, string>) => {
        const { completion } = await (
          await this.upstream.client()
        ).complete({
          ref: type === 'ref/prompt' ? { type, name: ref } : { type, uri: ref },
          argument,
          context: { arguments: resolved },
        });
        return completion;
      };
    return {
      skills: server.tools.map((definition) => this.skill(definition)),
      resources: {
        resources: server.resources,
        templates: server.templates,
        read: async (uri) => (await (await this.upstream.client()).readResource({ uri })).contents,
        ...(server.completions && { complete: complete('ref/resource') }),
      },
      prompts: {
        prompts: server.prompts,
        get: async (name, args) => {
          const prompt = await (await this.upstream.client()).getPrompt({ name, arguments: args });
          return {
            ...(prompt.description !== undefined && { description: prompt.description }),
            messages: prompt.messages as { role: 'user' | 'assistant'; content: Record<string, unknown> }[],
          };
        },
        ...(server.completions && { complete: complete('ref/prompt') }),
      },
    };
  }

  /** A tool of the server as a skill: the call goes to the server, with everything that rides along. */
  private skill(definition: SkillDefinition): Skill {
    return {
      definition,
      run: async (args, ctx) => {
        // An earlier delivery may have begun on a bridge that died mid-call: run again only what may run twice.
        if (ctx.attempt > 1 && !idempotent(definition)) {
          throw new ToolError(
            `${definition.name} was interrupted (the bridge running it stopped) and is not run again: the tool is not annotated idempotent`,
          );
        }
        const client = await this.upstream.client();
        try {
          const result = await this.calls.run(ctx, async () => {
            const result = (await client.callTool({ name: definition.name, arguments: args }, undefined, {
              signal: ctx.signal,
              timeout: ctx.deadline ? Math.max(1, ctx.deadline - Date.now()) : NO_DEADLINE_TIMEOUT_MS,
              onprogress: ({ progress, total, message }) => ctx.progress(progress, total, message),
            })) as CallToolResult;
            // The SDK client hands a response over at once but a notification a tick later: a progress
            // or log line the server sent just before its result is still queued. Let it out first.
            await new Promise((resolve) => setImmediate(resolve));
            return result;
          });
          return toOutput(result);
        } catch (error) {
          if (ctx.signal.aborted) throw error;
          throw this.failure(definition, error);
        }
      },
    };
  }

  /** Why a call to the server failed, as the caller should hear it. */
  private failure(definition: SkillDefinition, error: unknown): Error {
    const lost = error instanceof McpError && error.code === ErrorCode.ConnectionClosed;
    if (lost) {
      // The server went away mid-call (a stdio server exited): it is being started again.
      const why = `the MCP server stopped during the call (${(error as Error).message})`;
      return idempotent(definition) ? new RedeliverError(why) : new ToolError(`${why}; it is being started again`);
    }
    if (error instanceof McpError) return new ServerError(error.code, error.message);
    return error as Error;
  }
}

/** A JSON-RPC error of the server: the caller gets it as a tool error saying so. */
class ServerError extends ToolError {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** A tool the server says may run twice with the same arguments (MCP `idempotentHint`). */
function idempotent(definition: SkillDefinition): boolean {
  return (definition.annotations as { idempotentHint?: boolean } | undefined)?.idempotentHint === true;
}

function toOutput(result: CallToolResult): SkillOutput {
  return {
    content: (result.content ?? []) as ContentItem[],
    ...(result.structuredContent !== undefined && { structured: result.structuredContent }),
    ...(result.isError && { isError: true }),
  };
}

/** Start a bridge: the server connected, its catalogue registered, the agent serving. */
export async function startBridge(options: BridgeOptions): Promise<Bridge> {
  const bridge = new Bridge(options);
  await bridge.start();
  return bridge;
}

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { setTimeout as delay } from 'node:timers/promises';
import type { AgentLogger } from '../logger';

/** The MCP server behind the bridge: a command it runs (stdio), or a Streamable HTTP endpoint. */
export type UpstreamSpec =
  | {
      kind: 'stdio';
      command: string;
      args: string[];
      /** The server's environment beyond the SDK's safe default (`PATH`, `HOME`, …): `--env`. */
      env?: Record<string, string>;
    }
  | { kind: 'http'; url: string; headers: Record<string, string> };

/** What the bridge does with each connection, and how it reaches a Streamable HTTP server. */
export interface UpstreamHooks {
  /** Sets the client's handlers, before each connection. */
  configure(client: Client): void;
  /** Told of each new connection (the bridge lists the server's catalogue then). */
  connected(client: Client): Promise<void>;
  /** The HTTP transport's `fetch` (the bridge reads which call a server's request arrives under). */
  fetch?: FetchLike;
}

/** How long a stdio server that exits waits before it is started again: doubling, capped. */
const FIRST_RESTART_MS = 250;
const MAX_RESTART_MS = 10_000;
/** A server that stayed up this long starts its backoff afresh when it exits. */
const STABLE_AFTER_MS = 30_000;

/**
 * One connection to the MCP server with the official SDK client, made again
 * when it closes (a stdio server that exits is started again, with backoff).
 */
export class Upstream {
  private current?: Client;
  private ready?: Promise<Client>;
  private stopped = false;
  private restartDelay = FIRST_RESTART_MS;

  constructor(
    private readonly spec: UpstreamSpec,
    private readonly hooks: UpstreamHooks,
    private readonly logger: AgentLogger,
  ) {}

  /** The connected client (waits while the server is being started again). */
  client(): Promise<Client> {
    if (this.current) return Promise.resolve(this.current);
    this.ready ??= this.connect();
    return this.ready;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.current?.close().catch(() => undefined);
  }

  private async connect(): Promise<Client> {
    for (;;) {
      if (this.stopped) throw new Error('the bridge is stopping');
      const client = new Client(
        { name: 'mcpgw-bridge', version: '0.1.0' },
        { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: false } } },
      );
      this.hooks.configure(client);
      const startedAt = Date.now();
      try {
        await client.connect(this.transport());
        client.onclose = () => this.closed(client, startedAt);
        await this.hooks.connected(client);
        this.current = client;
        this.ready = undefined;
        this.logger.log({ msg: 'connected to the MCP server', server: describeServer(this.spec) });
        return client;
      } catch (error) {
        await client.close().catch(() => undefined);
        this.logger.warn({ msg: 'cannot connect to the MCP server; trying again', error: (error as Error).message });
        await this.backoff();
      }
    }
  }

  /** The connection closed (the stdio server exited, the HTTP server went away): connect again. */
  private closed(client: Client, startedAt: number): void {
    if (this.current !== client) return;
    this.current = undefined;
    if (this.stopped) return;
    if (Date.now() - startedAt > STABLE_AFTER_MS) this.restartDelay = FIRST_RESTART_MS;
    this.logger.warn({ msg: 'the MCP server connection closed; starting it again', server: describeServer(this.spec) });
    this.ready = this.backoff().then(() => this.connect());
    this.ready.catch(() => undefined);
  }

  private async backoff(): Promise<void> {
    await delay(this.restartDelay);
    this.restartDelay = Math.min(this.restartDelay * 2, MAX_RESTART_MS);
  }

  private transport(): Transport {
    if (this.spec.kind === 'http') {
      const { url, headers } = credentialsAsHeader(this.spec.url, this.spec.headers);
      return new StreamableHTTPClientTransport(url, {
        requestInit: { headers },
        ...(this.hooks.fetch && { fetch: this.hooks.fetch }),
      });
    }
    // Not the bridge's own environment (its NATS credentials, its cloud tokens): only what is named.
    return new StdioClientTransport({
      command: this.spec.command,
      args: this.spec.args,
      env: { ...getDefaultEnvironment(), ...this.spec.env },
      stderr: 'inherit',
    });
  }
}

/**
 * A URL's `user:password@` as the Basic credentials it means (unless an
 * `Authorization` header is given), and the URL without them: fetch refuses a
 * URL holding credentials, with an error quoting it whole.
 */
function credentialsAsHeader(
  given: string,
  headers: Record<string, string>,
): { url: URL; headers: Record<string, string> } {
  const url = new URL(given);
  if (!url.username && !url.password) return { url, headers };
  const basic = Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString(
    'base64',
  );
  const authorized = Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
  url.username = url.password = '';
  return { url, headers: authorized ? headers : { ...headers, Authorization: `Basic ${basic}` } };
}

/**
 * The server as logs name it: a URL without what may be a secret (userinfo,
 * query, fragment: `?token=…`), or the command line.
 */
export function describeServer(spec: UpstreamSpec): string {
  if (spec.kind === 'stdio') return [spec.command, ...spec.args].join(' ');
  try {
    const url = new URL(spec.url);
    return `${url.origin}${url.pathname}${url.search || url.hash ? '?…' : ''}`;
  } catch {
    return 'a Streamable HTTP server (its URL does not parse)';
  }
}

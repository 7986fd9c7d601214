import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
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

/** How long a stdio server that exits waits before it is started again: doubling, capped. */
const FIRST_RESTART_MS = 250;
const MAX_RESTART_MS = 10_000;
/** A server that stayed up this long starts its backoff afresh when it exits. */
const STABLE_AFTER_MS = 30_000;

/**
 * One connection to the MCP server with the official SDK client, made again
 * when it closes (a stdio server that exits is started again, with backoff).
 * `configure` sets the client's handlers before each connection; `connected`
 * is told of each new one (the bridge lists the server's catalogue then).
 */
export class Upstream {
  private current?: Client;
  private ready?: Promise<Client>;
  private stopped = false;
  private restartDelay = FIRST_RESTART_MS;

  constructor(
    private readonly spec: UpstreamSpec,
    private readonly configure: (client: Client) => void,
    private readonly connected: (client: Client) => Promise<void>,
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
      this.configure(client);
      const startedAt = Date.now();
      try {
        await client.connect(this.transport());
        client.onclose = () => this.closed(client, startedAt);
        await this.connected(client);
        this.current = client;
        this.ready = undefined;
        this.logger.log({ msg: 'connected to the MCP server', server: this.describe() });
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
    this.logger.warn({ msg: 'the MCP server connection closed; starting it again', server: this.describe() });
    this.ready = this.backoff().then(() => this.connect());
    this.ready.catch(() => undefined);
  }

  private async backoff(): Promise<void> {
    await delay(this.restartDelay);
    this.restartDelay = Math.min(this.restartDelay * 2, MAX_RESTART_MS);
  }

  private transport(): Transport {
    if (this.spec.kind === 'http') {
      return new StreamableHTTPClientTransport(new URL(this.spec.url), {
        requestInit: { headers: this.spec.headers },
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

  private describe(): string {
    return this.spec.kind === 'http' ? this.spec.url : [this.spec.command, ...this.spec.args].join(' ');
  }
}

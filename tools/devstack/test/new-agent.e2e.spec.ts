import { inboxPrefix } from '@mcpgw/bus';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, credsAuthenticator, JSONCodec } from 'nats';
import { afterAll, describe, expect, it } from 'vitest';
import {
  connectMcp,
  createDatabase,
  dropDatabase,
  freePort,
  natsServerAvailable,
  withDatabase,
  workspaceRoot,
} from '../src';
import { bannerOf, stopLauncher } from './support/banner';

/**
 * Getting started as a new user would: `npm start` prints the admin commands
 * that give a new agent of one's own its NATS credentials and an API key; run
 * exactly as printed, in the workspace, with no environment but PATH and HOME
 * (the CLI must find npm start's own database and authenticated nats-server by
 * itself), they work. The agent then connects to NATS with the creds file they
 * wrote, on the reply inbox the banner names, registers a tool, and the key they
 * printed opens an MCP session on the agent's endpoint that lists the tool.
 */
const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const root = workspaceRoot();

describe.skipIf(!!process.env.NATS_URL || !natsServerAvailable())('npm start, then a new agent', () => {
  const tag = `${process.pid}_${Date.now().toString(36)}`;
  const database = `mcpgw_test_start_${tag}`;
  const busPrefix = `test_newagent_${tag}`;
  const agentId = `new-agent-${tag.replace('_', '-')}`;
  const grantKeyFile = join(tmpdir(), `mcpgw-newagent-${tag}`, 'grant-signing-key.json');
  let launcher: ChildProcess | undefined;
  let credsFile: string | undefined;

  afterAll(async () => {
    await stopLauncher(launcher);
    if (credsFile) rmSync(credsFile, { force: true });
    rmSync(join(grantKeyFile, '..'), { recursive: true, force: true });
    await dropDatabase(ADMIN_URL, database).catch(() => undefined);
  });

  it('prints commands that, run as printed, let a new agent register and its key call', async () => {
    await createDatabase(ADMIN_URL, database);
    const [gatewayPort, msPort, ...managementPorts] = await Promise.all([1, 2, 3, 4, 5].map(() => freePort()));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: withDatabase(ADMIN_URL, database),
      GRANT_SIGNING_KEY_FILE: grantKeyFile,
      GATEWAY_PORT: String(gatewayPort),
      MESSAGE_SERVICE_PORT: String(msPort),
      GATEWAY_MANAGEMENT_PORT: String(managementPorts[0]),
      MESSAGE_SERVICE_MANAGEMENT_PORT: String(managementPorts[1]),
      AGENT_POD_MANAGEMENT_PORT: String(managementPorts[2]),
      BUS_PREFIX: busPrefix,
      NEW_AGENT_ID: agentId,
      LOG_LEVEL: 'warn',
    };
    delete env.NATS_URL;
    const child = spawn(process.execPath, [join(root, 'tools/devstack/dist/bin/start-stack.js')], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    launcher = child;
    const banner = await bannerOf(child, 60_000);
    expect(banner).toContain('with NATS auth on');

    // The section for a new agent: its commands, where its pods connect, and its endpoint.
    const section = banner.slice(banner.indexOf('An agent of your own'));
    const commands = section
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => /^(NPM_START_FILE=\S+ )?npm run admin -- /.test(line));
    expect(commands.map((c) => c.replace(/^.*npm run admin -- (\S+ \S+).*$/, '$1'))).toEqual([
      'agent create',
      'agent credentials',
      'apikey create',
    ]);
    const stackFile = join(root, /through (\S+) while it runs/.exec(section)![1]);
    expect(existsSync(stackFile)).toBe(true);

    const outputs: string[] = [];
    for (const command of commands) outputs.push(await runAsPrinted(command));
    const key = /^(bak_\S+)$/m.exec(outputs[2])?.[1];
    expect(key).toBeDefined();
    const connects = /Its pods connect to (\S+) with NATS_CREDS=(\S+) \(reply inbox prefix (\S+)\)/.exec(section);
    expect(connects).not.toBeNull();
    const [, natsUrl, creds, prefix] = connects!;
    credsFile = join(root, creds);
    expect(outputs[1]).toContain(`written to ${creds}`);
    expect(prefix).toBe(inboxPrefix(busPrefix, { role: 'agent', agentId }));

    // The agent, on its own credentials only: it registers one tool.
    const nc = await connect({
      servers: natsUrl,
      authenticator: credsAuthenticator(readFileSync(credsFile)),
      inboxPrefix: prefix,
    });
    try {
      const registerOn = new RegExp(`register on (\\S+) in workspace (\\S+) `).exec(section)!;
      expect(registerOn[1]).toBe(`${busPrefix}.registry.agents.${agentId}.register`);
      const codec = JSONCodec();
      const answer = await nc.request(
        registerOn[1],
        codec.encode({
          workspace_id: registerOn[2],
          agent_id: agentId,
          pod_id: 'new-agent-e2e',
          skills: [
            {
              name: 'hello',
              description: 'Says hello.',
              input_schema: { type: 'object', properties: { name: { type: 'string' } } },
            },
          ],
        }),
        { timeout: 10_000 },
      );
      expect(codec.decode(answer.data)).toEqual({ ok: true, data: { registered: 1 } });
    } finally {
      await nc.close();
    }

    // The printed key opens the agent's endpoint, which lists the registered tool.
    const endpoint = /clients call (\S+) with the key/.exec(section)![1].replace('localhost', '127.0.0.1');
    expect(endpoint).toBe(`http://127.0.0.1:${gatewayPort}/${agentId}/mcp`);
    const initialize = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-agent-api-key': key!,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1.0.0' } },
      }),
    });
    expect(initialize.status).toBe(200);
    await initialize.body?.cancel();
    const mcp = await connectMcp(endpoint, key!);
    try {
      expect((await mcp.client.listTools()).tools.map((t) => t.name)).toEqual(['hello']);
    } finally {
      await mcp.close();
    }

    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    // Stopped, the stack is no longer where the CLI looks.
    expect(existsSync(stackFile)).toBe(false);
  }, 90_000);
});

/** A printed line, run by a shell in the workspace with no environment of the test's: only PATH and HOME. */
function runAsPrinted(command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      '/bin/sh',
      ['-c', command],
      { cwd: root, env: { PATH: process.env.PATH, HOME: process.env.HOME } },
      (error, stdout, stderr) => {
        // Never the output itself in a failure: it may hold the key or the creds' path.
        if (error) reject(new Error(`${command.replace(/--out \S+/, '--out …')} failed: ${stderr.slice(-500)}`));
        else resolve(stdout);
      },
    );
  });
}

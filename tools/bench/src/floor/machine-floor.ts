import { isolatedEnvironment } from '@mcpgw/devstack';
import { connect } from 'nats';
import { fork } from 'node:child_process';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { Client } from 'pg';
import { LatencyRecorder } from '../load/latency';
import type { WebhookFloor } from './webhook-floor';

/**
 * What this machine charges for one step of a call, with no application work:
 * p50 of sequential round trips at 1 client, between two processes, on the
 * same nats-server and PostgreSQL the stack uses.
 */
export interface MachineFloor {
  /** An HTTP/1.1 keep-alive POST to a bare node:http server and its answer. */
  httpMs: number;
  /** A core NATS request to another process and its answer. */
  natsMs: number;
  /** A one-row INSERT of a ~1 KB jsonb, in its own transaction (commit flushed to the WAL). */
  commitMs: number;
  /**
   * The stack's critical path made of these steps alone: one HTTP round trip
   * (client and gateway), two NATS round trips (gateway and message service;
   * the inbox delivery to the pod and the pod's reply back), two commits (the
   * chat message before it is delivered, the reply before it is answered).
   */
  pathMs: number;
  /** The least a live webhook's delivery costs the machine's CPU (webhook-floor.ts), when a webhook system runs. */
  webhook?: WebhookFloor;
}

const ROUNDS = 1000;
const WARM_ROUNDS = 200;

async function p50(step: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < WARM_ROUNDS; i++) await step();
  const recorder = new LatencyRecorder();
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    await step();
    recorder.add(performance.now() - started);
  }
  return recorder.summary().p50;
}

function post(agent: Agent, port: number, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/', agent, headers: { 'content-type': 'application/json' } },
      (res) => res.resume().on('end', resolve).on('error', reject),
    );
    req.on('error', reject);
    req.end(body);
  });
}

export async function measureMachineFloor(): Promise<MachineFloor> {
  const isolation = await isolatedEnvironment('bench-floor', { auth: false });
  const subject = `${isolation.busPrefix}.floor`;
  const responder = fork(join(__dirname, 'floor-responder.js'), [isolation.natsUrl, subject], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const nc = await connect({ servers: isolation.natsUrl, noAsyncTraces: true });
  const db = new Client({ connectionString: isolation.databaseUrl });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      responder.once('message', (m: { port: number }) => resolve(m.port));
      responder.once('exit', (code) => reject(new Error(`floor responder exited (${code})`)));
    });
    const payload = new TextEncoder().encode('x'.repeat(300));
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { text: 'x'.repeat(300) } });
    const httpMs = await p50(() => post(agent, port, body));
    const natsMs = await p50(() => nc.request(subject, payload, { timeout: 5000 }));
    await db.connect();
    await db.query('CREATE TABLE floor (id bigserial PRIMARY KEY, body jsonb NOT NULL)');
    const envelope = JSON.stringify({ type: 'chat_message', text: 'x'.repeat(1000) });
    const commitMs = await p50(() => db.query('INSERT INTO floor (body) VALUES ($1)', [envelope]));
    return { httpMs, natsMs, commitMs, pathMs: httpMs + 2 * natsMs + 2 * commitMs };
  } finally {
    agent.destroy();
    await db.end().catch(() => undefined);
    await nc.close();
    responder.kill();
    await isolation.remove();
  }
}

import { createHmac, randomBytes } from 'node:crypto';
import { Pool } from 'undici';
import { CLOCK_TICKS, readStat } from '../proc/proc-table';
import { LiveReceiver } from '../webhooks/live-receiver';

/**
 * What one webhook delivery costs this machine's CPU at the least: a signed
 * Standard Webhooks POST of a tool_call.completed body, sent as the gateway
 * sends it (an undici keep-alive pool and its `dispatch`, `apps/gateway/src/webhooks/webhook-sender.ts`)
 * to the live webhook system's own receiver process (`webhooks/receiver.ts`),
 * with no application work on either side: no outcome row, no settle, no
 * call. Both ends run on the machine's cores, as they do in the live system.
 */
export interface WebhookFloor {
  /** CPU of the sending process per POST, ms. */
  senderMs: number;
  /** CPU of the receiver process per POST, ms. */
  receiverMs: number;
  totalMs: number;
  /** POSTs in flight at once. */
  inFlight: number;
}

const POSTS = 10_000;
const WARM_POSTS = 1_000;
const IN_FLIGHT = 16;

/** About the body a live-webhook call's event has: the ~300-byte echoed text and the call's facts. */
function eventBody(i: number): string {
  return JSON.stringify({
    type: 'tool_call.completed',
    timestamp: new Date().toISOString(),
    data: {
      call_id: `call_${i.toString(16).padStart(32, '0')}`,
      tool: 'echo',
      agent_id: 'bench-agent',
      caller_id: 'apikey:0123456789abcdef',
      surface: 'agent',
      duration_ms: 12,
      result: { text: `#floor.${i} ${'x'.repeat(300)}`, truncated: false, content_types: ['text'] },
    },
  });
}

export async function measureWebhookFloor(): Promise<WebhookFloor> {
  const receiver = await LiveReceiver.start();
  const pool = new Pool(`http://127.0.0.1:${receiver.port}`, { connections: 64, keepAliveTimeout: 10_000 });
  const secret = randomBytes(24);
  const post = async (i: number) => {
    const id = `msg_${i}`;
    const timestamp = String(Math.floor(Date.now() / 1000));
    const body = eventBody(i);
    const signature = createHmac('sha256', secret).update(`${id}.${timestamp}.${body}`).digest('base64');
    // As the gateway sends it: undici's dispatch, the status read and the body dropped.
    await new Promise<void>((resolve, reject) =>
      pool.dispatch(
        {
          path: '/floor',
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'mcpgw-bench',
            'webhook-id': id,
            'webhook-timestamp': timestamp,
            'webhook-signature': `v1,${signature}`,
          },
          body,
          headersTimeout: 10_000,
          bodyTimeout: 10_000,
        },
        {
          onConnect: () => undefined,
          onHeaders: () => true,
          onData: () => true,
          onComplete: () => resolve(),
          onError: reject,
        },
      ),
    );
  };
  const run = async (from: number, count: number) => {
    let next = from;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < from + count) await post(next++);
      }),
    );
  };
  const receiverTicks = () => readStat(receiver.pid)?.cpuTicks ?? 0;
  try {
    await run(0, WARM_POSTS);
    const sender0 = process.cpuUsage();
    const receiver0 = receiverTicks();
    await run(WARM_POSTS, POSTS);
    const sender = process.cpuUsage(sender0);
    const senderMs = (sender.user + sender.system) / 1000 / POSTS;
    const receiverMs = ((receiverTicks() - receiver0) * 1000) / CLOCK_TICKS / POSTS;
    return { senderMs, receiverMs, totalMs: senderMs + receiverMs, inFlight: IN_FLIGHT };
  } finally {
    await pool.close();
    await receiver.stop();
  }
}

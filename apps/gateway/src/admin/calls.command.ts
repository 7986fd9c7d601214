import { InvalidRequestError } from '@mcpgw/contracts';
import { BusClient, busOptionsFromEnv, connectBus } from '@mcpgw/bus';
import type { AdminDeps, Command } from './commands';
import { retriesGet } from '../idempotency/rendered-again';
import { listCalls, showCall, type CallDetail, type CallSummary } from './operations/calls';

/**
 * `call show <call id>`: one call as the services hold it, and `call list`:
 * the recent ones, filtered. What they read and how is `operations/calls.ts`,
 * which the management API's `/calls` routes call too; here only the words
 * and flags are read and the text written. The CLI asks the message service
 * over the bus as the gateway does, with the gateway's NATS settings.
 */
export const callShow: Command = async (deps, { words }) => {
  const callId = words[2];
  if (!callId) throw new InvalidRequestError('call show needs a call id: call show <call id>');
  const found = await withBus(deps, (bus) => showCall(bus, deps.idempotency, callId));
  return { json: found, text: found.calls.map((call) => asText(found.call_id, call)).join('\n\n') };
};

/** `call list [--agent A] [--tool T] [--caller C] [--outcome O] [--limit N] [--before B]`. */
export const callList: Command = async (deps, { flags }) => {
  const fields = {
    agent_id: flags.agent,
    tool: flags.tool,
    caller_id: flags.caller,
    outcome: flags.outcome,
    limit: flags.limit,
    before: flags.before,
  };
  const page = await withBus(deps, (bus) => listCalls(bus, fields));
  const lines = page.items.map(lineOf);
  if (page.next_before) lines.push(`(more: --before ${page.next_before})`);
  return { json: page, text: lines.length ? lines.join('\n') : '(no calls)' };
};

function lineOf(call: CallSummary): string {
  const ms = call.duration_ms === null ? '-' : `${call.duration_ms} ms`;
  return [call.started_at, call.call_id, call.agent_id, call.tool, call.caller_id, call.outcome, ms].join('\t');
}

/** `call show`'s words for what a retry with the call's key gets (`retriesGet`). */
const RETRIES_GET = {
  stored: ', retries replay the stored result',
  rendered: ', retries get the reply rendered again',
  'in flight': ', not completed',
} as const;

function asText(callId: string, call: CallDetail): string {
  const { hops_ms: hops } = call.timings;
  const ms = (value: number | null) => (value === null ? '-' : `${value} ms`);
  const record = call.idempotency;
  return [
    `call ${callId}`,
    `  agent     ${call.agent_id}`,
    `  tool      ${call.tool || '-'}`,
    `  caller    ${call.caller_id}`,
    `  channel   ${call.channel_id} (message ${call.message_id})`,
    `  outcome   ${call.outcome}${call.outcome_detail ? `: ${call.outcome_detail}` : ''}${call.pod_id ? ` (pod ${call.pod_id})` : ''}`,
    `  trace     ${call.trace_id ?? '-'}`,
    `  posted    ${call.timings.posted_at}`,
    `  hops      gateway -> message service ${ms(hops.gateway_to_message_service)}; ` +
      `stored -> agent replied ${ms(hops.message_service_to_agent_reply)}; ` +
      `reply -> stored ${ms(hops.agent_reply_to_stored)}; total ${ms(call.timings.total_ms)}`,
    `  idempotency ${
      record
        ? `key ${JSON.stringify(record.key)}, expires ${record.expires_at}` +
          RETRIES_GET[retriesGet(record.replays_stored_result, record.surface)]
        : '(no key, or its record has expired)'
    }`,
  ].join('\n');
}

/** A bus connection with the gateway's NATS settings (NATS_URL, NATS_CREDS), for one command. */
async function withBus<T>({ env }: AdminDeps, use: (bus: BusClient) => Promise<T>): Promise<T> {
  const options = busOptionsFromEnv(env, 'mcpgw-admin', { role: 'gateway' });
  const nc = await connectBus(options);
  try {
    return await use(new BusClient(nc, options));
  } finally {
    await nc.close();
  }
}

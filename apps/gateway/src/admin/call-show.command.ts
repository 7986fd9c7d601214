import {
  BusPattern,
  CALL_ID_PATTERN,
  InvalidRequestError,
  NotFoundError,
  isAttemptsExhausted,
  protocolErrorOf,
  type AgentReply,
  type ChatMessage,
  type StoredCall,
} from '@mcpgw/contracts';
import { BusClient, busOptionsFromEnv, connectBus } from '@mcpgw/bus';
import type { RecordView } from '../idempotency/idempotency.store';
import type { AdminDeps, Command } from './commands';

/** How long the CLI waits for the message service to answer. */
const FIND_TIMEOUT_MS = 5_000;

/**
 * `call show <call id>`: one call as the services hold it. The message service
 * has its chat_message and reply (asked over the bus, as the gateway asks it:
 * the CLI connects with the gateway's NATS settings); the gateway's database
 * has its idempotency record, if the caller gave a key. A caller's own call id
 * (surface B's `params.call_id`) may name several calls: each is shown, newest
 * first. Hop times come from three clocks (gateway, agent, database).
 */
export const callShow: Command = async (deps, { words }) => {
  const callId = words[2];
  if (!callId || !CALL_ID_PATTERN.test(callId)) {
    throw new InvalidRequestError('call show needs a call id: call show <call id>');
  }
  const stored = await findCall(deps, callId);
  if (stored.length === 0) {
    throw new NotFoundError(`no call ${callId}: the message service holds no message with that call id`);
  }
  const calls = await Promise.all(stored.map((call) => describe(deps, call)));
  return { json: { call_id: callId, calls }, text: calls.map((call) => asText(callId, call)).join('\n\n') };
};

type CallView = Awaited<ReturnType<typeof describe>>;

async function describe(deps: AdminDeps, { message, reply }: StoredCall) {
  const chat = message.envelope as ChatMessage;
  const answer = reply?.envelope as AgentReply | undefined;
  const record = await deps.idempotency.ofMessage(chat.agent_id, chat.sender.id, chat.id);
  const at = {
    posted: Date.parse(chat.created_at),
    stored: Date.parse(message.stored_at),
    replied: answer && Date.parse(answer.created_at),
    replyStored: reply && Date.parse(reply.stored_at),
  };
  const between = (from: number | undefined, to: number | undefined) =>
    from === undefined || to === undefined ? null : to - from;
  return {
    agent_id: chat.agent_id,
    tool: chat.tool_call?.name ?? null,
    caller_id: chat.sender.id,
    channel_id: message.channel_id,
    message_id: chat.id,
    outcome: outcomeOf(answer),
    pod_id: (answer?.meta?.pod_id as string | undefined) ?? null,
    timings: {
      posted_at: chat.created_at,
      stored_at: message.stored_at,
      replied_at: answer?.created_at ?? null,
      reply_stored_at: reply?.stored_at ?? null,
      hops_ms: {
        gateway_to_message_service: between(at.posted, at.stored),
        message_service_to_agent_reply: between(at.stored, at.replied),
        agent_reply_to_stored: between(at.replied, at.replyStored),
      },
      total_ms: between(at.posted, at.replyStored),
    },
    idempotency: record ? recordOf(record) : null,
  };
}

function outcomeOf(reply: AgentReply | undefined): string {
  if (!reply) return 'no reply stored (still running, or never answered)';
  if (isAttemptsExhausted(reply)) return 'failed: the agent could not run the call (deliveries ran out)';
  const protocolError = protocolErrorOf(reply);
  if (protocolError) return `failed: ${protocolError.code} ${protocolError.message}`;
  return reply.is_error ? 'tool_error' : 'ok';
}

function recordOf(record: RecordView) {
  return {
    key: record.key,
    created_at: record.created_at.toISOString(),
    completed_at: record.completed_at?.toISOString() ?? null,
    expires_at: record.expires_at.toISOString(),
    replays_stored_result: record.replayable,
  };
}

function asText(callId: string, call: CallView): string {
  const { hops_ms: hops } = call.timings;
  const ms = (value: number | null) => (value === null ? '-' : `${value} ms`);
  const record = call.idempotency;
  return [
    `call ${callId}`,
    `  agent     ${call.agent_id}`,
    `  tool      ${call.tool ?? '-'}`,
    `  caller    ${call.caller_id}`,
    `  channel   ${call.channel_id} (message ${call.message_id})`,
    `  outcome   ${call.outcome}${call.pod_id ? ` (pod ${call.pod_id})` : ''}`,
    `  posted    ${call.timings.posted_at}`,
    `  hops      gateway -> message service ${ms(hops.gateway_to_message_service)}; ` +
      `stored -> agent replied ${ms(hops.message_service_to_agent_reply)}; ` +
      `reply -> stored ${ms(hops.agent_reply_to_stored)}; total ${ms(call.timings.total_ms)}`,
    `  idempotency ${
      record
        ? `key ${JSON.stringify(record.key)}, expires ${record.expires_at}` +
          (record.replays_stored_result ? ', retries replay the stored result' : ', not completed')
        : '(no key, or its record has expired)'
    }`,
  ].join('\n');
}

/** Ask the message service over the bus, as the gateway does, with its NATS settings (NATS_URL, NATS_CREDS). */
async function findCall({ env }: AdminDeps, callId: string): Promise<StoredCall[]> {
  const options = busOptionsFromEnv(env, 'mcpgw-admin', { role: 'gateway' });
  const nc = await connectBus(options);
  try {
    const { calls } = await new BusClient(nc, options).request(
      BusPattern.FindCall,
      { call_id: callId },
      FIND_TIMEOUT_MS,
    );
    return calls;
  } finally {
    await nc.close();
  }
}

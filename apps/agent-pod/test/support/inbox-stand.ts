import { ensureAgentConsumer } from '@mcpgw/bus';
import {
  agentInboxState,
  messageServiceRest,
  startTestStack,
  type MessageServiceRest,
  type TestStack,
} from '@mcpgw/devstack';
import type { NatsConnection } from 'nats';

/**
 * A stack with no pod yet, whose agent's inbox consumer is made with the
 * test's ack wait: the test plays a pod (or a replica) itself first, then
 * starts a real pod to see what it does with what it finds.
 */
export interface InboxStand {
  env: TestStack;
  /** A connection with the stack's own rights (it may pull, publish and listen anywhere). */
  nc: NatsConnection;
  prefix: string;
  /** The message service's REST mirror. */
  rest: MessageServiceRest;
  /** The inbox consumer's ack floor: every message up to it is acked. */
  acknowledged(): Promise<number>;
  /** The `skill started` lines of every pod, for one message. */
  skillRuns(messageId: string): Record<string, unknown>[];
  stop(): Promise<void>;
}

export async function startInboxStand(ackWaitMs: number): Promise<InboxStand> {
  const env = await startTestStack({ pods: 0 });
  const nc = await env.connectNats();
  const prefix = env.stack.settings.busPrefix;
  await ensureAgentConsumer(await nc.jetstreamManager(), prefix, env.agentId, { ackWaitMs, maxDeliver: 6 });
  return {
    env,
    nc,
    prefix,
    rest: messageServiceRest(() => env.messageServiceUrl, env.stack.messageServiceToken),
    acknowledged: async () => (await agentInboxState(nc, prefix, env.agentId)).ackFloor,
    skillRuns: (messageId) =>
      env.stack.processes
        .filter((p) => p.name.startsWith('agent-pod'))
        .flatMap((p) => p.logs)
        .filter((l) => l.msg === 'skill started' && l.message_id === messageId),
    stop: async () => {
      await nc.close();
      await env.stop();
    },
  };
}

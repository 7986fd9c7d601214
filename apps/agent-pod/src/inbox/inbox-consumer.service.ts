import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { AgentInbox, ChatMessage, ReplyHeaders, parseAs, type AgentReply } from '@mcpgw/contracts';
import { BUS_OPTIONS, NATS_CONNECTION, ackSubjectOf, decodeJson, ensureAgentConsumer, type BusOptions } from '@mcpgw/bus';
import type { ReadinessCheck } from '@mcpgw/observability';
import type { Consumer, JsMsg, NatsConnection } from 'nats';
import { setTimeout as delay } from 'node:timers/promises';
import { AGENT_POD_ENV, type AgentPodEnv } from '../config/agent-pod.env';
import { SkillCancelledError } from './cancellations.service';
import { ReplierService } from '../replies/replier.service';
import { SkillRunner } from './skill-runner';
import { RecentlySeen } from './recently-seen';

const FETCH_EXPIRES_MS = 5_000;

/**
 * Pulls this agent's chat messages from JetStream. All pods of one agent share
 * one durable consumer, so each message goes to one pod (JetStream's queue
 * group). A message is acked only after its reply is stored; while a skill runs
 * the pod tells JetStream it is still working, so a live pod keeps its message
 * and a dead pod's message is redelivered after the ack wait. See README.md.
 */
@Injectable()
export class InboxConsumerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(InboxConsumerService.name);
  /** Messages this pod finished, with their reply (null: cancelled, no reply), to answer a copy without running it again. */
  private readonly completed = new RecentlySeen<AgentReply | null>();
  private readonly inFlight = new Set<string>();
  private running = true;
  private loop?: Promise<void>;
  private slotFreed?: () => void;
  /** Why the last pull failed; cleared by the next one that works. */
  private fetchFailure?: string;
  /** The pull request under way, so a shutdown can end it at once. */
  private batch?: { stop(): void };

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_OPTIONS) private readonly bus: BusOptions,
    @Inject(AGENT_POD_ENV) private readonly env: AgentPodEnv,
    private readonly runner: SkillRunner,
    private readonly replier: ReplierService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const consumer = await this.consumer();
    this.loop = this.pull(consumer);
    this.logger.log({ msg: 'consuming', agent_id: this.env.AGENT_ID });
  }

  /** The agent's durable consumer, made (again) if it is not there. */
  private async consumer(): Promise<Consumer> {
    const durable = await this.bindConsumer();
    return this.nc.jetstream().consumers.get(AgentInbox.streamName(this.bus.prefix), durable);
  }

  /** The message service owns the inbox stream; until it has made it, wait. */
  private async bindConsumer(): Promise<string> {
    const jsm = await this.nc.jetstreamManager();
    for (let attempt = 1; ; attempt++) {
      try {
        return await ensureAgentConsumer(jsm, this.bus.prefix, this.env.AGENT_ID, {
          ackWaitMs: this.env.INBOX_ACK_WAIT_MS,
          maxDeliver: this.env.INBOX_MAX_DELIVER,
        });
      } catch (error) {
        if (!/stream not found/i.test((error as Error).message) || !this.running) throw error;
        if (attempt === 1) this.logger.warn('inbox stream not there yet (is the message service up?); waiting');
        await delay(500);
      }
    }
  }

  /** Ready while pulling from the agent's inbox, and the last pull worked. */
  readiness(): ReadinessCheck {
    return {
      name: 'inbox',
      check: async () => {
        if (!this.loop || !this.running) throw new Error('not consuming');
        if (this.fetchFailure) throw new Error(`cannot pull from the inbox: ${this.fetchFailure}`);
      },
    };
  }

  async onApplicationShutdown(): Promise<void> {
    this.running = false;
    this.slotFreed?.();
    this.batch?.stop();
    await this.loop;
  }

  /**
   * Ask only for as many messages as there are free slots: a pod never hoards
   * work. A failed pull (the consumer or the stream was lost, e.g. a NATS server
   * with memory storage restarted) binds the consumer again, which waits for
   * the message service to make the stream again.
   */
  private async pull(first: Consumer): Promise<void> {
    let consumer = first;
    while (this.running) {
      const free = this.env.POD_CONCURRENCY - this.inFlight.size;
      if (free <= 0) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
        continue;
      }
      try {
        const batch = await consumer.fetch({ max_messages: free, expires: FETCH_EXPIRES_MS });
        this.batch = batch;
        for await (const msg of batch) {
          this.handle(msg).catch((error: Error) => this.logger.error(`handling inbox message ${msg.seq}: ${error.message}`));
          if (!this.running) break;
        }
        this.fetchFailure = undefined;
      } catch (error) {
        if (!this.running) return;
        this.fetchFailure = (error as Error).message;
        this.logger.warn(`fetch failed: ${this.fetchFailure}; binding the consumer again`);
        await delay(500);
        consumer = await this.consumer().catch((bindError: Error) => {
          this.logger.warn(`binding the consumer failed: ${bindError.message}`);
          return consumer;
        });
      }
    }
  }

  private async handle(msg: JsMsg): Promise<void> {
    const parsed = parseAs(ChatMessage, decodeJson(msg.data));
    if (!parsed.ok || !parsed.value.channel_id) {
      this.logger.error({ msg: 'dropping malformed inbox message', seq: msg.seq, errors: parsed.ok ? [] : parsed.errors });
      msg.term();
      return;
    }
    const message = parsed.value;
    if (this.completed.has(message.id)) return this.answerCopy(msg, message.id);
    if (this.inFlight.has(message.id)) return; // already running here; its ack will follow
    this.inFlight.add(message.id);
    const heartbeat = setInterval(() => msg.working(), Math.max(this.env.INBOX_ACK_WAIT_MS / 3, 100));
    try {
      const reply = await this.runner.answer(message, msg.info.redeliveryCount);
      this.completed.add(message.id, reply);
      await this.sendReply(msg, reply);
    } catch (error) {
      if (error instanceof SkillCancelledError) {
        // The caller gave up on it: done, with no reply and no redelivery.
        this.completed.add(message.id, null);
        this.logger.log({ msg: 'skill cancelled', message_id: message.id });
        msg.ack();
        return;
      }
      this.logger.error({ msg: 'could not answer; will be redelivered', message_id: message.id, error: (error as Error).message });
      msg.nak(1_000);
    } finally {
      clearInterval(heartbeat);
      this.inFlight.delete(message.id);
      this.slotFreed?.();
      this.slotFreed = undefined;
    }
  }

  /**
   * First delivery: straight to the replica that delivered the message; it
   * acks once the reply is stored (if it never does, the message comes back
   * and is answered from `completed`). A redelivery: stored by request, acked here.
   */
  private async sendReply(msg: JsMsg, reply: AgentReply): Promise<void> {
    const replica = replicaOf(msg);
    if (replica && !msg.info.redelivered) return this.replier.sendDirect(reply, replica, ackSubjectOf(msg));
    await this.replier.store(reply, replica);
    msg.ack();
  }

  /** A copy of a message this pod finished: its reply again (storing it is idempotent), never the skill. */
  private async answerCopy(msg: JsMsg, messageId: string): Promise<void> {
    this.logger.log({ msg: 'duplicate dropped', message_id: messageId }); // the skill does not run again
    const reply = this.completed.get(messageId);
    try {
      if (reply) await this.replier.store(reply, replicaOf(msg));
      msg.ack();
    } catch (error) {
      this.logger.error({ msg: 'could not store the reply again; will be redelivered', message_id: messageId, error: (error as Error).message });
      msg.nak(1_000);
    }
  }
}

/** The message service replica that delivered the message and waits for its reply (its replies subject). */
function replicaOf(msg: JsMsg): string | undefined {
  return msg.headers?.get(ReplyHeaders.replyTo) || undefined;
}

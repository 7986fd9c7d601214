import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ATTEMPTS_EXHAUSTED, type AgentReply } from '@mcpgw/contracts';
import { InboxReader, type BoundInbox, type InboxConsumerState, type InboxDelivery } from '@mcpgw/bus';
import { METRICS_REGISTRY, hopTimer, type ReadinessCheck } from '@mcpgw/observability';
import { Counter, Gauge, type Registry } from 'prom-client';
import { Draining } from '@mcpgw/runtime';
import { setTimeout as delay } from 'node:timers/promises';
import { AGENT_POD_ENV, type AgentPodEnv } from '../config/agent-pod.env';
import { SkillStoppedError } from '../cancellation/cancellations.service';
import { ReplierService, isTransient } from '../replies/replier.service';
import { text } from '../skills/skill';
import { PodStoppingError, SkillRunner } from './skill-runner';
import { RecentlySeen } from './recently-seen';

/**
 * How long one pull waits for messages: 5 s, and no more than half the ack wait
 * (but the 1 s nats.js requires). A pod killed outright leaves its pull behind
 * at the server until it expires; nats-server 2.9 offers a redelivery that
 * comes due to that dead pull first and then delivers it as a first delivery
 * (count 1), so the message would escape INBOX_MAX_DELIVER. Expired by then, a
 * dead pull takes nothing.
 */
function fetchExpiresMs(ackWaitMs: number): number {
  return Math.max(1_000, Math.min(5_000, Math.floor(ackWaitMs / 2)));
}
/** The consumer's counts on /metrics are asked of JetStream at most this often (one API request each). */
const CONSUMER_STATE_MAX_AGE_MS = 5_000;

/**
 * Pulls this agent's chat messages from JetStream. All pods of one agent share
 * one durable consumer, so each message goes to one pod (JetStream's queue
 * group). A message is acked only after its reply is stored; while a skill runs
 * the pod tells JetStream it is still working, so a live pod keeps its message
 * and a dead pod's message is redelivered after the ack wait. The bus checks
 * each message first (a malformed one is terminated there). See README.md.
 */
@Injectable()
export class InboxConsumerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(InboxConsumerService.name);
  /** Messages this pod finished, with their reply (null: cancelled or out of time, no reply), to answer a copy without running it again. */
  private readonly completed = new RecentlySeen<AgentReply | null>();
  private readonly inFlight = new Set<string>();
  private running = true;
  private loop?: Promise<void>;
  private slotFreed?: () => void;
  /** Why the last pull failed; cleared by the next one that works. */
  private fetchFailure?: string;
  /** The pull request under way, so a shutdown can end it at once. */
  private batch?: { stop(): void };
  /** Resolved when no message is in flight any more (a drain waits for it). */
  private idle: (() => void)[] = [];
  /** Aborted past the drain's grace: replies not stored by then are handed back. */
  private readonly stopStoring = new AbortController();
  /** The consumer pulled from now, and when a pull last ended (or the pod last waited for a free slot). */
  private bound?: BoundInbox;
  private lastPullAt = 0;
  /** Times hop `pod` (/metrics): message received to reply sent. */
  private readonly hop: () => () => void;
  private readonly redeliveries: Counter<'agent'>;
  /** The consumer's counts, cached for CONSUMER_STATE_MAX_AGE_MS. */
  private consumerState?: { at: number; state: Promise<InboxConsumerState | undefined> };

  constructor(
    private readonly inbox: InboxReader,
    @Inject(AGENT_POD_ENV) private readonly env: AgentPodEnv,
    private readonly runner: SkillRunner,
    private readonly replier: ReplierService,
    draining: Draining,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.hop = hopTimer(registry, 'pod');
    const agent = env.AGENT_ID;
    this.redeliveries = new Counter({
      name: 'mcpgw_inbox_redeliveries_total',
      help: 'Inbox messages this pod received again (JetStream redelivered them: a pod died, an ack wait ran out, a nak)',
      labelNames: ['agent'],
      registers: [registry],
    });
    this.redeliveries.inc({ agent }, 0);
    const counts = () => this.readConsumerState();
    new Gauge({
      name: 'mcpgw_inbox_consumer_messages',
      help: "The agent's inbox consumer as JetStream counts it (consumer info, at most every 5 s): pending (not yet delivered), ack_pending (delivered, not acked), redelivered (delivered more than once, not acked)",
      labelNames: ['agent', 'state'],
      registers: [registry],
      async collect() {
        const state = await counts();
        if (!state) return;
        this.set({ agent, state: 'pending' }, state.pending);
        this.set({ agent, state: 'ack_pending' }, state.ackPending);
        this.set({ agent, state: 'redelivered' }, state.redelivered);
      },
    });
    // The drain (libs/runtime/README.md): stop pulling; let running skills finish and their
    // replies go out; past the grace, stop them and nak their messages for another pod.
    draining.register({
      name: 'inbox',
      stopIntake: () => this.stopPulling(),
      settled: async () => {
        await this.loop;
        await this.whenIdle();
      },
      handBack: async () => {
        this.runner.handBack();
        this.stopStoring.abort();
        await this.whenIdle();
      },
      pending: () => (this.inFlight.size ? [`${this.inFlight.size} message(s) running: ${[...this.inFlight]}`] : []),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    const consumer = await this.consumer();
    this.lastPullAt = Date.now();
    this.loop = this.pull(consumer);
    this.logger.log({ msg: 'consuming', agent_id: this.env.AGENT_ID });
  }

  /**
   * The agent's durable consumer, made (again) if it is not there. The message
   * service owns the inbox stream; until it has made it, wait.
   */
  private async consumer(): Promise<BoundInbox> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.inbox.bind(this.env.AGENT_ID, {
          ackWaitMs: this.env.INBOX_ACK_WAIT_MS,
          // One delivery more than skill attempts: the last one only answers with an error (`giveUp`).
          maxDeliver: this.env.INBOX_MAX_DELIVER + 1,
        });
      } catch (error) {
        if (!/stream not found/i.test((error as Error).message) || !this.running) throw error;
        if (attempt === 1) this.logger.warn('inbox stream not there yet (is the message service up?); waiting');
        await delay(500);
      }
    }
  }

  /**
   * Ready while pulling from the agent's inbox: the last pull worked, and one ended
   * recently (or every slot is busy). States: `not consuming`, `last pull failed`,
   * `not fetching` (the error of a failed pull is logged, never shown on /ready).
   */
  readiness(): ReadinessCheck {
    return {
      name: 'inbox',
      check: async () => {
        if (!this.loop || !this.running) return 'not consuming';
        if (this.fetchFailure) return 'last pull failed';
        const busy = this.inFlight.size >= this.env.POD_CONCURRENCY;
        // A pull ends within fetchExpiresMs: none ended for three of them, with slots free, is a stall.
        const stalled = Date.now() - this.lastPullAt > 3 * fetchExpiresMs(this.env.INBOX_ACK_WAIT_MS);
        if (!busy && stalled) return 'not fetching';
      },
    };
  }

  /** The consumer's counts for /metrics: asked of JetStream at most every CONSUMER_STATE_MAX_AGE_MS. */
  private readConsumerState(): Promise<InboxConsumerState | undefined> {
    const now = Date.now();
    if (!this.consumerState || now - this.consumerState.at > CONSUMER_STATE_MAX_AGE_MS) {
      const bound = this.bound;
      this.consumerState = {
        at: now,
        state: bound ? bound.state().catch(() => undefined) : Promise.resolve(undefined),
      };
    }
    return this.consumerState.state;
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopPulling();
    this.stopStoring.abort();
    await this.loop;
  }

  private stopPulling(): void {
    this.running = false;
    this.slotFreed?.();
    this.batch?.stop();
  }

  private whenIdle(): Promise<void> {
    return this.inFlight.size === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
  }

  /**
   * Ask only for as many messages as there are free slots: a pod never hoards
   * work. A failed pull (the consumer or the stream was lost, e.g. a NATS server
   * with memory storage restarted) binds the consumer again, which waits for
   * the message service to make the stream again.
   */
  private async pull(first: BoundInbox): Promise<void> {
    let consumer = (this.bound = first);
    while (this.running) {
      const free = this.env.POD_CONCURRENCY - this.inFlight.size;
      if (free <= 0) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
        this.lastPullAt = Date.now();
        continue;
      }
      try {
        const batch = await consumer.fetch(free, fetchExpiresMs(this.env.INBOX_ACK_WAIT_MS));
        this.batch = batch;
        for await (const msg of batch) {
          // Pulled as the pod began to stop: straight back, for another pod.
          if (!this.running) {
            msg.nak();
            continue;
          }
          // In the trace the message carries (the call's): the skill and the reply are its spans.
          msg
            .traced(() => this.handle(msg))
            .catch((error: Error) => this.logger.error(`handling inbox message ${msg.seq}: ${error.message}`));
        }
        this.fetchFailure = undefined;
        this.lastPullAt = Date.now();
      } catch (error) {
        if (!this.running) return;
        this.fetchFailure = (error as Error).message;
        this.logger.warn(`fetch failed: ${this.fetchFailure}; binding the consumer again`);
        await delay(500);
        consumer = this.bound = await this.consumer().catch((bindError: Error) => {
          this.logger.warn(`binding the consumer failed: ${bindError.message}`);
          return consumer;
        });
      }
    }
  }

  /**
   * One delivery, held with `working()` for as long as this pod works on it:
   * the skill, then storing its reply. A copy of a message answered here gets
   * the remembered reply; a message whose skill attempts are used up gets an
   * error reply instead of another run.
   */
  private async handle(msg: InboxDelivery): Promise<void> {
    const { message } = msg;
    if (this.inFlight.has(message.id)) return; // already worked on here; its ack will follow
    this.inFlight.add(message.id);
    const hopDone = this.hop();
    if (msg.redelivered) this.redeliveries.inc({ agent: this.env.AGENT_ID });
    const heartbeat = setInterval(() => msg.working(), Math.max(this.env.INBOX_ACK_WAIT_MS / 3, 100));
    try {
      if (this.completed.has(message.id)) return await this.answerCopy(msg, message.id);
      if (msg.redeliveryCount > this.env.INBOX_MAX_DELIVER) return await this.giveUp(msg);
      const reply = await this.run(msg);
      if (reply) {
        await this.sendReply(msg, reply);
        hopDone();
      }
    } finally {
      clearInterval(heartbeat);
      this.inFlight.delete(message.id);
      this.slotFreed?.();
      this.slotFreed = undefined;
      if (this.inFlight.size === 0) for (const resolve of this.idle.splice(0)) resolve();
    }
  }

  /** The skill's reply, remembered until the pod forgets it; none when the message is done or handed back. */
  private async run(msg: InboxDelivery): Promise<AgentReply | undefined> {
    const { message } = msg;
    try {
      const reply = await this.runner.answer(message, msg.redeliveryCount, msg.ids);
      this.completed.add(message.id, reply);
      return reply;
    } catch (error) {
      if (error instanceof PodStoppingError) {
        // The pod stops before the skill finished: another pod takes the message now.
        this.logger.log({ msg: 'handed back', message_id: message.id });
        msg.nak();
      } else if (error instanceof SkillStoppedError) {
        // The caller cancelled, or its time is up: done, with no reply and no redelivery.
        this.completed.add(message.id, null);
        this.logger.log({
          msg: `skill ${error.why === 'cancelled' ? 'cancelled' : 'stopped at its deadline'}`,
          message_id: message.id,
        });
        msg.ack();
      } else {
        this.logger.error({
          msg: 'could not answer; will be redelivered',
          message_id: message.id,
          error: (error as Error).message,
          ...msg.ids,
        });
        msg.nak(1_000);
      }
      return undefined;
    }
  }

  /**
   * First delivery: straight to the replica that delivered the message; it
   * acks once the reply is stored (if it never does, the message comes back
   * and is answered from `completed`). A redelivery: stored by request, acked here.
   */
  private async sendReply(msg: InboxDelivery, reply: AgentReply): Promise<void> {
    const replica = msg.replyTo;
    if (replica && !msg.redelivered) return this.replier.sendDirect(reply, replica, msg.ackSubject);
    await this.storeHeld(msg, reply);
  }

  /** A copy of a message this pod finished: its reply again (storing it is idempotent), never the skill. */
  private async answerCopy(msg: InboxDelivery, messageId: string): Promise<void> {
    this.logger.log({ msg: 'duplicate dropped', message_id: messageId }); // the skill does not run again
    const reply = this.completed.get(messageId);
    if (reply) return this.storeHeld(msg, reply);
    msg.ack();
  }

  /**
   * Delivered once more than INBOX_MAX_DELIVER (the consumer allows one extra
   * delivery for this): the skill had its attempts; answer with an error, so
   * the caller and its idempotency record get an answer instead of a timeout.
   */
  private async giveUp(msg: InboxDelivery): Promise<void> {
    const { message } = msg;
    const attempts = msg.redeliveryCount - 1;
    this.logger.warn({ msg: 'attempts used up: answering with an error', message_id: message.id, attempts });
    const note = `the agent could not complete this call after ${attempts} attempts`;
    const answer = this.replier.toReply(message, { content: [text(note)], isError: true });
    const reply = { ...answer, meta: { ...answer.meta, outcome: ATTEMPTS_EXHAUSTED } };
    this.completed.add(message.id, reply);
    await this.storeHeld(msg, reply);
  }

  /**
   * Store a reply and then ack, holding the message meanwhile (the heartbeat of
   * `handle`): only the post is retried while the message service is away,
   * never the skill. A reply the service refuses is logged and the message
   * acked (retrying cannot help). Past the drain's grace the message is naked
   * unstored: the reply lived in this pod's memory only, so the pod that gets
   * it next runs the skill again (README.md).
   */
  private async storeHeld(msg: InboxDelivery, reply: AgentReply): Promise<void> {
    const message_id = msg.message.id;
    const onRetry = (error: unknown, attempt: number) => {
      if (attempt === 1 || attempt % 10 === 0) {
        this.logger.warn({ msg: 'reply not stored yet; trying again', message_id, attempt, error: `${error}` });
      }
    };
    try {
      await this.replier.store(reply, msg.replyTo, this.stopStoring.signal, onRetry);
      msg.ack();
    } catch (error) {
      if (isTransient(error)) {
        this.logger.warn({ msg: 'handed back with its reply unstored', message_id, error: `${error}` });
        msg.nak();
      } else {
        this.logger.error({ msg: 'the message service refused the reply; dropped', message_id, error: `${error}` });
        msg.ack();
      }
    }
  }
}

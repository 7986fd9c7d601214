import { ATTEMPTS_EXHAUSTED, isRetryable, type AgentReply } from '@mcpgw/contracts';
import type { BoundInbox, InboxConsumerState, InboxDelivery, InboxReader, ReplicaAddress } from '@mcpgw/bus/core';
import { setTimeout as delay } from 'node:timers/promises';
import { SkillStoppedError } from '../cancellation/cancellations';
import type { AgentLogger } from '../logger';
import type { Replier } from '../replies/replier';
import { text } from '../skills/skill';
import { AgentStoppingError, type SkillRunner } from '../skills/skill-runner';
import { RecentlySeen } from './recently-seen';
import { confirmWithinMs, fetchExpiresMs } from './timings';

export interface ConsumerSettings {
  agentId: string;
  /** How long JetStream waits for an ack before redelivering; running skills extend it. */
  ackWaitMs: number;
  /** Skill attempts per message; the consumer allows one delivery more, for the give-up reply. */
  maxDeliver: number;
  /** Messages this instance works on at once. */
  concurrency: number;
}

/** Told of each delivery; what it returns is called once the reply is sent (the `pod` hop, in the mock pod). */
export type DeliveryHook = (delivery: { redelivered: boolean }) => (() => void) | void;

/**
 * Pulls the agent's chat messages from JetStream. All instances of one agent
 * share one durable consumer, so each message goes to one of them (JetStream's
 * queue group). A message is acked only after its reply is stored; while a
 * skill runs the instance tells JetStream it is still working, so a live
 * instance keeps its message and a dead one's is redelivered after the ack
 * wait. The bus checks each message first (a malformed one is terminated
 * there). See ./README.md.
 */
export class InboxConsumer {
  /** Messages finished here, with their reply (null: cancelled or out of time, no reply), to answer a copy without running it again. */
  private readonly completed = new RecentlySeen<AgentReply | null>();
  /** Messages worked on here, by id: the stream sequence of the delivery being worked on, and when it is done. */
  private readonly inFlight = new Map<string, { seq: number; done: Promise<void> }>();
  private running = true;
  private loop?: Promise<void>;
  private slotFreed?: () => void;
  /** Why the last pull failed; cleared by the next one that works. */
  private fetchFailure?: string;
  /** The pull request under way, so a stop can end it at once. */
  private batch?: { stop(): void };
  /** Resolved when no message is in flight any more (a drain waits for it). */
  private idle: (() => void)[] = [];
  /** Aborted past the drain's grace: replies not stored by then are handed back. */
  private readonly stopStoring = new AbortController();
  private bound?: BoundInbox;
  private lastPullAt = 0;

  constructor(
    private readonly inbox: InboxReader,
    private readonly settings: ConsumerSettings,
    private readonly runner: SkillRunner,
    private readonly replier: Replier,
    private readonly logger: AgentLogger,
    private readonly onDelivery: DeliveryHook = () => undefined,
  ) {}

  /** Bind the durable consumer (waiting for the inbox stream) and start pulling. */
  async start(): Promise<void> {
    const consumer = await this.consumer();
    this.lastPullAt = Date.now();
    this.loop = this.pull(consumer);
    this.logger.log({ msg: 'consuming', agent_id: this.settings.agentId });
  }

  /** Stop pulling; what runs goes on. */
  stopPulling(): void {
    this.running = false;
    this.slotFreed?.();
    this.batch?.stop();
  }

  /** The pull loop has ended and nothing is in flight. */
  async settled(): Promise<void> {
    await this.loop;
    await this.whenIdle();
  }

  /** Past the drain's grace: stop the skills, hand their messages back, stop retrying unstored replies. */
  async handBack(): Promise<void> {
    this.runner.handBack();
    this.stopStoring.abort();
    await this.whenIdle();
  }

  /** What is still running, for the drain's report. */
  pending(): string[] {
    return this.inFlight.size ? [`${this.inFlight.size} message(s) running: ${[...this.inFlight.keys()]}`] : [];
  }

  /**
   * Why the agent is not ready, or undefined: `not consuming`, `last pull
   * failed`, `not fetching` (no pull ended for three pull periods with slots free).
   */
  notReady(): string | undefined {
    if (!this.loop || !this.running) return 'not consuming';
    if (this.fetchFailure) return 'last pull failed';
    const busy = this.inFlight.size >= this.settings.concurrency;
    const stalled = Date.now() - this.lastPullAt > 3 * fetchExpiresMs(this.settings.ackWaitMs);
    if (!busy && stalled) return 'not fetching';
    return undefined;
  }

  /** The consumer's counts, from JetStream (one API request). */
  async state(): Promise<InboxConsumerState | undefined> {
    return this.bound?.state().catch(() => undefined);
  }

  private whenIdle(): Promise<void> {
    return this.inFlight.size === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
  }

  /**
   * The agent's durable consumer, made (again) if it is not there. The message
   * service owns the inbox stream; until it has made it, wait.
   */
  private async consumer(): Promise<BoundInbox> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.inbox.bind(this.settings.agentId, {
          ackWaitMs: this.settings.ackWaitMs,
          // One delivery more than skill attempts: the last one only answers with an error (`giveUp`).
          maxDeliver: this.settings.maxDeliver + 1,
        });
      } catch (error) {
        if (!/stream not found/i.test((error as Error).message) || !this.running) throw error;
        if (attempt === 1) this.logger.warn('inbox stream not there yet (is the message service up?); waiting');
        await delay(500);
      }
    }
  }

  /**
   * Ask only for as many messages as there are free slots: an instance never
   * hoards work. A failed pull (the consumer or the stream was lost, e.g. a
   * NATS server with memory storage restarted) binds the consumer again, which
   * waits for the message service to make the stream again.
   */
  private async pull(first: BoundInbox): Promise<void> {
    let consumer = (this.bound = first);
    while (this.running) {
      const free = this.settings.concurrency - this.inFlight.size;
      if (free <= 0) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
        this.lastPullAt = Date.now();
        continue;
      }
      try {
        const batch = await consumer.fetch(free, fetchExpiresMs(this.settings.ackWaitMs));
        this.batch = batch;
        for await (const msg of batch) {
          // Pulled as the agent began to stop: straight back, for another instance.
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
   * One delivery, held with `working()` for as long as this instance works on
   * it: the skill, then storing its reply. A copy of a message answered here
   * gets the remembered reply; a message whose skill attempts are used up gets
   * an error reply instead of another run.
   */
  private async handle(msg: InboxDelivery): Promise<void> {
    const { message } = msg;
    const running = this.inFlight.get(message.id);
    if (running?.seq === msg.seq) return; // this very delivery again: its ack will follow
    if (running) return this.afterRunning(msg, running.done);
    let done!: () => void;
    this.inFlight.set(message.id, { seq: msg.seq, done: new Promise<void>((resolve) => (done = resolve)) });
    const replied = this.onDelivery({ redelivered: msg.redelivered });
    const heartbeat = this.holding(msg);
    try {
      if (this.completed.has(message.id)) return await this.answerCopy(msg, message.id);
      if (msg.redelivered && (await this.answeredElsewhere(msg))) return;
      if (msg.redeliveryCount > this.settings.maxDeliver) return await this.giveUp(msg);
      const reply = await this.run(msg);
      if (reply) {
        await this.sendReply(msg, reply);
        replied?.();
      }
    } finally {
      clearInterval(heartbeat);
      this.inFlight.delete(message.id);
      done();
      this.slotFreed?.();
      this.slotFreed = undefined;
      if (this.inFlight.size === 0) for (const resolve of this.idle.splice(0)) resolve();
    }
  }

  /**
   * A copy of a message under another stream sequence (published again past
   * JetStream's de-dup window) while the first is still worked on here, e.g.
   * its reply stored but not yet confirmed: held until that one is done, then
   * handled as a copy of it (its reply again, never the skill). Left unacked,
   * it would wait out the ack wait for its redelivery.
   */
  private async afterRunning(msg: InboxDelivery, running: Promise<void>): Promise<void> {
    const heartbeat = this.holding(msg);
    try {
      await running;
    } finally {
      clearInterval(heartbeat);
    }
    return this.handle(msg);
  }

  /** Tell JetStream, every third of the ack wait, that this instance still works on the message. */
  private holding(msg: InboxDelivery): NodeJS.Timeout {
    return setInterval(() => msg.working(), Math.max(this.settings.ackWaitMs / 3, 100));
  }

  /** The skill's reply, remembered until forgotten; none when the message is done or handed back. */
  private async run(msg: InboxDelivery): Promise<AgentReply | undefined> {
    const { message } = msg;
    try {
      const reply = await this.runner.answer(message, msg.redeliveryCount, msg.ids);
      this.completed.add(message.id, reply);
      return reply;
    } catch (error) {
      if (error instanceof AgentStoppingError) {
        // The agent stops before the skill finished: another instance takes the message now.
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
   * First delivery: straight to the replica that delivered the message, which
   * stores the reply, acks the message for us and answers. Without that answer
   * (`confirmWithinMs`: the replica died, or the reply was lost with a NATS server) the reply is
   * stored here like a redelivery's, and acked here: it lives in this
   * instance's memory only, so another instance that got the message after
   * the ack wait would run the skill again (docs/scaling.md, "A reply lost with
   * its pod's NATS server"). A refusal is met again there, and logged.
   */
  private async sendReply(msg: InboxDelivery, reply: AgentReply): Promise<void> {
    const replica = msg.replyTo;
    if (replica && !msg.redelivered) {
      try {
        return await this.replier.storeDirect(reply, replica, msg.ackSubject, confirmWithinMs(this.settings.ackWaitMs));
      } catch (error) {
        this.logger.warn({
          msg: 'the delivering replica did not confirm the reply; storing it by request',
          message_id: msg.message.id,
          error: `${error}`,
        });
      }
      return this.storeHeld(msg, reply, undefined); // at any replica: that one did not answer
    }
    await this.storeHeld(msg, reply, replica);
  }

  /** A copy of a message finished here: its reply again (storing it is idempotent), never the skill. */
  private async answerCopy(msg: InboxDelivery, messageId: string): Promise<void> {
    this.logger.log({ msg: 'duplicate dropped', message_id: messageId }); // the skill does not run again
    const reply = this.completed.get(messageId);
    if (reply) return this.storeHeld(msg, reply, msg.replyTo);
    msg.ack();
  }

  /**
   * A redelivery this instance did not answer. Another instance may have, and
   * its ack was lost (a stream leader killed as the replica acked): the store
   * is shared, the instances' memories are not, so ask the message service
   * before running the skill again. Asked again, with backoff, while it does
   * not answer (the heartbeat of `handle` holds the message meanwhile); past
   * the drain's grace, handed back. A refusal (not this agent's channel) runs it.
   */
  private async answeredElsewhere(msg: InboxDelivery): Promise<boolean> {
    const { message } = msg;
    const onRetry = (error: unknown, attempt: number) => {
      if (attempt === 1 || attempt % 10 === 0) {
        this.logger.warn({
          msg: 'cannot tell yet whether a redelivery is answered',
          message_id: message.id,
          error: `${error}`,
        });
      }
    };
    try {
      if (!(await this.replier.isAnswered(message, this.stopStoring.signal, onRetry))) return false;
    } catch (error) {
      if (!isRetryable(error)) {
        this.logger.warn({
          msg: 'whether a redelivery is answered was refused; running it',
          message_id: message.id,
          error: `${error}`,
        });
        return false;
      }
      this.logger.warn({ msg: 'handed back: whether it is answered is unknown', message_id: message.id });
      msg.nak();
      return true;
    }
    this.logger.log({ msg: 'answered elsewhere: acked, the skill does not run', message_id: message.id });
    this.completed.add(message.id, null);
    msg.ack();
    return true;
  }

  /**
   * Delivered once more than `maxDeliver` (the consumer allows one extra
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
    await this.storeHeld(msg, reply, msg.replyTo);
  }

  /**
   * Store a reply and then ack, holding the message meanwhile (the heartbeat of
   * `handle`): only the post is retried while the message service is away,
   * never the skill. A reply the service refuses is logged and the message
   * acked (retrying cannot help). Past the drain's grace the message is naked
   * unstored: the reply lived in this instance's memory only, so the instance
   * that gets it next runs the skill again. Tried first at `replica` (the one
   * that delivered the message: it may hold the waiter), then at any replica.
   */
  private async storeHeld(msg: InboxDelivery, reply: AgentReply, replica: ReplicaAddress | undefined): Promise<void> {
    const message_id = msg.message.id;
    const onRetry = (error: unknown, attempt: number) => {
      if (attempt === 1 || attempt % 10 === 0) {
        this.logger.warn({ msg: 'reply not stored yet; trying again', message_id, attempt, error: `${error}` });
      }
    };
    try {
      await this.replier.store(reply, replica, this.stopStoring.signal, onRetry);
      msg.ack();
    } catch (error) {
      if (isRetryable(error)) {
        this.logger.warn({ msg: 'handed back with its reply unstored', message_id, error: `${error}` });
        msg.nak();
      } else {
        this.logger.error({ msg: 'the message service refused the reply; dropped', message_id, error: `${error}` });
        msg.ack();
      }
    }
  }
}

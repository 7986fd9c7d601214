import { AgentNotices } from '@mcpgw/contracts';
import { BusClient, InboxReader, connectBus, type InboxConsumerState, type NatsConnection } from '@mcpgw/bus/core';
import { resolveSettings, type AgentSettings } from './agent-options';
import { Cancellations } from './cancellation/cancellations';
import { InboxConsumer, type DeliveryHook } from './inbox/consumer';
import { jsonLinesLogger, type AgentLogger } from './logger';
import { Presence } from './registration/presence';
import { Registration } from './registration/registration';
import { CallEventsPublisher } from './replies/call-events';
import { Questions } from './replies/questions';
import { Replier } from './replies/replier';
import type { Catalogue } from './skills/catalogue';
import type { MessageHandler } from './skills/message-handler';
import type { AgentHandle } from './skills/skill';
import { SkillRunner } from './skills/skill-runner';

export interface AgentOptions extends Partial<AgentSettings>, Catalogue {
  agentId: string;
  /** Where the SDK logs (default: JSON lines on stderr). */
  logger?: AgentLogger;
  /**
   * An open NATS connection to use instead of making one (its owner closes it;
   * it must ask from the agent's inbox, `_INBOX.<prefix>.agent.<agentId>`).
   */
  connection?: NatsConnection;
  /** Drain on SIGTERM and SIGINT, then exit (default true; a host with its own shutdown passes false). */
  handleSignals?: boolean;
  /**
   * `start()` resolves once consuming, and registration goes on in the
   * background, retried until the registry answers (default false: `start()`
   * waits for it). For a host that must serve health checks meanwhile.
   */
  registerInBackground?: boolean;
  /** Told of each delivery (metrics): what it returns is called once the reply is sent. */
  onDelivery?: DeliveryHook;
  /** Where unset settings are read (default `process.env`). */
  env?: Record<string, string | undefined>;
}

/** What runs once the agent has started. */
interface Running {
  nc: NatsConnection;
  ownsConnection: boolean;
  bus: BusClient;
  cancellations: Cancellations;
  registration: Registration;
  presence: Presence;
  consumer: InboxConsumer;
}

/**
 * An agent on the bus: `start()` connects, binds its inbox consumer, registers
 * its catalogue and serves; `stop()` drains. Several may live in one process
 * (one connection each: an agent's credentials are its own).
 */
export class Agent implements AgentHandle {
  readonly settings: AgentSettings;
  private readonly logger: AgentLogger;
  private running?: Running;
  private starting?: Promise<void>;
  private stopping?: Promise<void>;
  private offered: Catalogue;

  constructor(private readonly options: AgentOptions) {
    this.settings = resolveSettings(options, options.env ?? process.env);
    this.logger = options.logger ?? jsonLinesLogger(`agent ${options.agentId}`);
    this.offered = {
      skills: options.skills,
      resources: options.resources,
      prompts: options.prompts,
      onMessage: options.onMessage,
    };
  }

  get agentId(): string {
    return this.settings.agentId;
  }

  /** Connect, bind the inbox consumer (waiting for the message service's stream), serve, and register. */
  start(): Promise<void> {
    this.starting ??= this.begin();
    return this.starting;
  }

  private async begin(): Promise<void> {
    const s = this.settings;
    const nc =
      this.options.connection ??
      (await connectBus({
        url: s.natsUrl,
        prefix: s.busPrefix,
        name: `agent-${s.agentId}-${s.podId}`,
        credsFile: s.natsCreds,
        identity: { role: 'agent', agentId: s.agentId },
      }));
    const busOptions = {
      url: s.natsUrl,
      prefix: s.busPrefix,
      name: s.podId,
      identity: { role: 'agent' as const, agentId: s.agentId },
    };
    const bus = new BusClient(nc, busOptions);
    const events = new CallEventsPublisher(bus, s.agentId);
    const replier = new Replier(bus, s.agentId, s.podId);
    const cancellations = new Cancellations(bus, s.agentId, this.logger);
    const registration = new Registration(bus, s, this.offered, this.logger);
    const presence = new Presence(bus, s, s.presenceIntervalMs, this.logger);
    const runner = new SkillRunner({
      bus,
      agentId: s.agentId,
      podId: s.podId,
      replier,
      events,
      questions: new Questions(bus, events, s.agentId),
      cancellations,
      registration,
      agent: this,
      logger: this.logger,
    });
    const consumer = new InboxConsumer(
      new InboxReader(nc, busOptions),
      { agentId: s.agentId, ackWaitMs: s.ackWaitMs, maxDeliver: s.maxDeliver, concurrency: s.concurrency },
      runner,
      replier,
      this.logger,
      this.options.onDelivery,
    );
    this.running = {
      nc,
      ownsConnection: !this.options.connection,
      bus,
      cancellations,
      registration,
      presence,
      consumer,
    };
    cancellations.start();
    await consumer.start();
    // Beats before the registry knows the pod change nothing; the registration itself counts as seen.
    presence.start();
    if (this.options.handleSignals ?? true) this.onSignals();
    const registered = registration.start();
    if (this.options.registerInBackground) {
      registered.catch((error: Error) => this.logger.error({ msg: 'registration refused', error: error.message }));
      return;
    }
    // Refused (an invalid schema, another workspace): nothing would call this agent; say why and stop.
    await registered.catch(async (error: Error) => {
      await this.close(this.running!);
      throw new Error(`registration refused: ${error.message}`);
    });
  }

  /**
   * Drain: stop taking messages, let running skills finish and their replies
   * be stored within `shutdownGraceMs`; past it, stop them and hand their
   * messages back (another instance takes them at once). Then close.
   */
  stop(): Promise<void> {
    this.stopping ??= this.drain();
    return this.stopping;
  }

  private async drain(): Promise<void> {
    await this.starting?.catch(() => undefined);
    if (this.running) await this.close(this.running);
  }

  private async close(running: Running): Promise<void> {
    running.consumer.stopPulling();
    running.registration.stop();
    running.presence.leave();
    const graceOver = new Promise<'late'>((resolve) =>
      setTimeout(resolve, this.settings.shutdownGraceMs, 'late').unref(),
    );
    if ((await Promise.race([running.consumer.settled(), graceOver])) === 'late') {
      this.logger.warn({ msg: 'handing back what still runs', pending: running.consumer.pending() });
      await running.consumer.handBack();
    }
    running.cancellations.stop();
    if (running.ownsConnection && !running.nc.isClosed()) await running.nc.drain().catch(() => running.nc.close());
  }

  /** The steps of `stop()`, for a host that runs its own drain (the mock pod's libs/runtime Draining). */
  get drainSteps() {
    const consumer = () => this.running?.consumer;
    return {
      stopIntake: () => {
        consumer()?.stopPulling();
        this.running?.registration.stop();
        this.running?.presence.leave();
      },
      settled: async () => consumer()?.settled(),
      handBack: async () => consumer()?.handBack(),
      pending: () => consumer()?.pending() ?? [],
      close: () => this.running?.cancellations.stop(),
    };
  }

  catalogue(): Catalogue {
    return this.offered;
  }

  /**
   * Answer conversational messages (A2A messages that name no skill) with
   * `handler`; registered as the `conversation` capability (again, if the
   * agent runs already). One handler: a second call replaces the first.
   */
  onMessage(handler: MessageHandler): this {
    this.offered = { ...this.offered, onMessage: handler };
    void this.running?.registration
      .update({ onMessage: handler })
      .catch((error: Error) => this.logger.error({ msg: 'registration refused', error: error.message }));
    return this;
  }

  /** Change the catalogue (skills, resources, prompts) and register it: clients watching the lists hear of it. */
  async update(catalogue: Partial<Catalogue>): Promise<void> {
    this.offered = { ...this.offered, ...catalogue };
    await this.running?.registration.update(catalogue);
  }

  /**
   * Tell clients watching the resource (subscriptions/listen, resources/subscribe)
   * that it changed, outside of any call (a skill uses `ctx.resourceUpdated`).
   */
  resourceUpdated(uri: string): void {
    this.running?.bus.publish(AgentNotices.at(this.settings.agentId), { kind: 'resource_updated', uri });
  }

  /** Whether the gateway's registry has accepted the catalogue (once, at least). */
  get registered(): boolean {
    return !!this.running?.registration.registered;
  }

  /** Why the inbox consumer is not serving, or undefined: `not started`, `not consuming`, `last pull failed`, `not fetching`. */
  inboxNotReady(): string | undefined {
    return this.running ? this.running.consumer.notReady() : 'not started';
  }

  /** Why the agent is not ready to serve, or undefined. */
  notReady(): string | undefined {
    return this.registered ? this.inboxNotReady() : 'not registered yet';
  }

  /** The inbox consumer's counts from JetStream (one API request: not more than every few seconds). */
  consumerState(): Promise<InboxConsumerState | undefined> {
    return this.running?.consumer.state() ?? Promise.resolve(undefined);
  }

  private onSignals(): void {
    const onSignal = (signal: NodeJS.Signals) => {
      this.logger.log({ msg: `${signal}: draining`, agent_id: this.agentId });
      this.stop().then(
        () => process.exit(0),
        (error: Error) => {
          this.logger.error({ msg: 'drain failed', error: error.message });
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }
}

/** An agent, not started yet: `await agent.start()`. */
export function createAgent(options: AgentOptions): Agent {
  return new Agent(options);
}

import {
  AGENT_ID_PATTERN,
  POD_ID_PATTERN,
  PRESENCE_INTERVAL_MAX_MS,
  PRESENCE_INTERVAL_MIN_MS,
  PRESENCE_INTERVAL_MS,
} from '@mcpgw/contracts';
import { DeploymentEnv, LogEnv, ManagementEnv, NatsEnv, ShutdownEnv, TracingEnv, validateEnv } from '@mcpgw/config';
import { IsInt, Matches, Max, Min } from 'class-validator';
import { hostname } from 'node:os';

/**
 * The agent pod: the agent it serves, and how it takes messages from the
 * agent's inbox (libs/agent-sdk/src/inbox/README.md).
 */
export class AgentPodSettings {
  /** The agent this pod serves. */
  @Matches(AGENT_ID_PATTERN)
  AGENT_ID: string = 'demo-agent';

  /** The agent's workspace. */
  @Matches(AGENT_ID_PATTERN)
  WORKSPACE_ID: string = 'demo';

  /**
   * Names this pod in replies, logs and the gateway's pod records (several pods serve one agent).
   * @defaultValue (host name and process id)
   */
  @Matches(POD_ID_PATTERN)
  POD_ID: string = `${hostname()}-${process.pid}`;

  /** How long JetStream waits for an ack before redelivering; running skills extend it. */
  @IsInt()
  @Min(500)
  INBOX_ACK_WAIT_MS: number = 30_000;

  /** Skill attempts per message; one more delivery answers it with an error reply (libs/agent-sdk/src/inbox/README.md). */
  @IsInt()
  @Min(1)
  INBOX_MAX_DELIVER: number = 5;

  /**
   * How often this pod (and any agent of either SDK: libs/agent-sdk, sdks/python)
   * tells the gateway it is up (`agents.<agent>.presence`); the console counts it
   * online while heard within 3 intervals, and offline at once when it drains.
   */
  @IsInt()
  @Min(PRESENCE_INTERVAL_MIN_MS)
  @Max(PRESENCE_INTERVAL_MAX_MS)
  PRESENCE_INTERVAL_MS: number = PRESENCE_INTERVAL_MS;

  /** Messages one pod works on at once. */
  @IsInt()
  @Min(1)
  @Max(1024)
  POD_CONCURRENCY: number = 64;
}

/** /health, /ready and /metrics on their own port: a pod serves nothing else over HTTP. */
export class AgentPodManagementEnv extends ManagementEnv {
  override MANAGEMENT_PORT = 9200;
}

export function loadEnv(env: NodeJS.ProcessEnv = process.env) {
  return validateEnv(
    env,
    DeploymentEnv,
    NatsEnv,
    LogEnv,
    TracingEnv,
    AgentPodManagementEnv,
    ShutdownEnv,
    AgentPodSettings,
  );
}
export type AgentPodEnv = ReturnType<typeof loadEnv>;
export const AGENT_POD_ENV = Symbol('AGENT_POD_ENV');

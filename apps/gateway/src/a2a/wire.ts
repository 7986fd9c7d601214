/*
 * A2A 1.0 on the wire: the ProtoJSON form of `lf.a2a.v1` (a2a.proto), as the
 * official SDK (`@a2a-js/sdk` 1.3.0) reads and writes it: camelCase members,
 * enums by name (`TASK_STATE_COMPLETED`, `ROLE_AGENT`), a `oneof` as the name
 * of its member (`{"text": …}`, `{"task": …}`). Only what this surface sends
 * or reads is typed here; the gateway does not load the SDK at run time.
 */

/** The protocol version this surface speaks, in `A2A-Version` and the card's interfaces. */
export const A2A_VERSION = '1.0';
export const A2A_VERSION_HEADER = 'a2a-version';

export type TaskState =
  | 'TASK_STATE_SUBMITTED'
  | 'TASK_STATE_WORKING'
  | 'TASK_STATE_COMPLETED'
  | 'TASK_STATE_FAILED'
  | 'TASK_STATE_CANCELED'
  | 'TASK_STATE_INPUT_REQUIRED'
  | 'TASK_STATE_REJECTED'
  | 'TASK_STATE_AUTH_REQUIRED';

export type Role = 'ROLE_USER' | 'ROLE_AGENT';

/** One of `text`, `raw` (base64), `url` or `data`, with its optional `filename` and `mediaType`. */
export interface Part {
  text?: string;
  raw?: string;
  url?: string;
  data?: unknown;
  filename?: string;
  mediaType?: string;
  metadata?: Record<string, unknown>;
}

export interface Message {
  messageId: string;
  contextId?: string;
  taskId?: string;
  role: Role;
  parts: Part[];
  metadata?: Record<string, unknown>;
  extensions?: string[];
  referenceTaskIds?: string[];
}

export interface SendMessageConfiguration {
  acceptedOutputModes?: string[];
  historyLength?: number;
  returnImmediately?: boolean;
  taskPushNotificationConfig?: Record<string, unknown>;
}

/** `SendMessage` and `SendStreamingMessage` params (JSON-RPC), the body of `POST /message:send` (HTTP+JSON). */
export interface SendMessageRequest {
  tenant?: string;
  message: Message;
  configuration?: SendMessageConfiguration;
  metadata?: Record<string, unknown>;
}

/** A `SendMessageResponse`: exactly one of the two. */
export type SendMessageResponse = { message: Message } | { task: Record<string, unknown> };

export interface AgentSkill {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples?: string[];
  inputModes?: string[];
  outputModes?: string[];
}

export interface AgentInterface {
  url: string;
  protocolBinding: 'JSONRPC' | 'HTTP+JSON';
  protocolVersion: string;
}

export type SecurityScheme =
  | { apiKeySecurityScheme: { location: 'header'; name: string; description?: string } }
  | { httpAuthSecurityScheme: { scheme: string; bearerFormat?: string; description?: string } }
  | { oauth2SecurityScheme: { oauth2MetadataUrl: string; description?: string } };

/** Scheme name → the scopes it needs (`StringList`). */
export interface SecurityRequirement {
  schemes: Record<string, { list: string[] }>;
}

export interface AgentExtension {
  uri: string;
  description?: string;
  required?: boolean;
  params?: Record<string, unknown>;
}

export interface AgentCard {
  name: string;
  description: string;
  supportedInterfaces: AgentInterface[];
  provider?: { organization: string; url: string };
  version: string;
  documentationUrl?: string;
  capabilities: {
    streaming: boolean;
    pushNotifications: boolean;
    extendedAgentCard: boolean;
    extensions: AgentExtension[];
  };
  securitySchemes: Record<string, SecurityScheme>;
  securityRequirements: SecurityRequirement[];
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: AgentSkill[];
}

import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import type { Message } from '@a2a-js/sdk';
import { randomUUID } from 'node:crypto';

/*
 * The official `@a2a-js/sdk` client against a gateway's A2A surface, as an A2A
 * application would connect (beside `connectMcp`): the gateway's e2e tests and
 * the example agents' test use it.
 */

/** The card's two 1.0 interfaces, as the SDK names them. */
export type Binding = 'JSONRPC' | 'HTTP+JSON';

/** A fetch that sends these headers on every request the SDK makes (card and calls). */
export function withHeaders(headers: Record<string, string>): typeof fetch {
  return (input, init) =>
    fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), ...headers } });
}

/** The official SDK's factory, preferring one binding, every request with `headers`. */
export function a2aFactory(binding: Binding, headers: Record<string, string>): ClientFactory {
  const fetchImpl = withHeaders(headers);
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      preferredTransports: [binding],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
}

/** A client of the agent whose card is under `baseUrl` (e.g. `…/a2a/{agent_id}/`), with an API key or other headers. */
export function a2aClient(
  baseUrl: string,
  binding: Binding,
  credential: string | Record<string, string>,
): Promise<Client> {
  const headers = typeof credential === 'string' ? { 'x-agent-api-key': credential } : credential;
  return a2aFactory(binding, headers).createFromUrl(baseUrl);
}

/**
 * A client that speaks A2A 0.3 only (the SDK's `legacyCompat`): it takes the card's 0.3 interface,
 * so its requests carry no `A2A-Version` and 0.3's methods and shapes (`message/send`, …).
 */
export async function a2aLegacyClient(baseUrl: string, headers: Record<string, string>): Promise<Client> {
  const card = await (await a2aClient(baseUrl, 'JSONRPC', headers)).getAgentCard();
  const legacyCard = {
    ...card,
    supportedInterfaces: card.supportedInterfaces.filter((i) => i.protocolVersion === '0.3'),
  };
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: withHeaders(headers), legacyCompat: { enabled: true } })],
    }),
  ).createFromAgentCard(legacyCard);
}

/** A message of the user, naming a skill (or none: a conversational message). */
export function userMessage(
  skill: string | undefined,
  parts: Message['parts'],
  fields: Partial<Message> = {},
): Message {
  return {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: 1, // ROLE_USER
    parts,
    metadata: skill ? { skill } : undefined,
    extensions: [],
    referenceTaskIds: [],
    ...fields,
  };
}

export const dataPart = (value: unknown) => ({
  content: { $case: 'data' as const, value },
  metadata: undefined,
  filename: '',
  mediaType: '',
});

export const textPart = (value: string) => ({
  content: { $case: 'text' as const, value },
  metadata: undefined,
  filename: '',
  mediaType: '',
});

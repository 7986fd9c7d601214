import { Parser } from '@asyncapi/parser';
import { AgentInbox, BUS_ACCESS, ReplyHeaders, subject } from '@mcpgw/contracts';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { asyncapiDocument, DOCUMENT_PATH, TEMPLATE_PATH } from '../../asyncapi/src/document';

/**
 * docs/asyncapi.yaml is the wire contract for agents in any language (issue 24):
 * it must be valid AsyncAPI, and it must be what the generator makes of
 * libs/contracts now, so a contract change without `npm run asyncapi` fails here.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const checkedIn = readFileSync(resolve(root, DOCUMENT_PATH), 'utf8');

interface Doc {
  channels: Record<string, { address: string | null; messages: Record<string, unknown> }>;
  components: { messages: Record<string, { headers?: { properties?: Record<string, unknown> } }> };
}

describe('docs/asyncapi.yaml', () => {
  it('is valid AsyncAPI (@asyncapi/parser: no errors)', async () => {
    const { document, diagnostics } = await new Parser().parse(checkedIn);
    const errors = diagnostics.filter((d) => d.severity === 0).map((d) => `${d.path.join('.')}: ${d.message}`);
    expect(errors).toEqual([]);
    expect(document).toBeDefined();
  });

  it('is what `npm run asyncapi` generates from libs/contracts now', async () => {
    const generated = await asyncapiDocument(readFileSync(resolve(root, TEMPLATE_PATH), 'utf8'), root);
    expect(
      checkedIn === generated,
      `${DOCUMENT_PATH} is out of date with libs/contracts or ${TEMPLATE_PATH}: run npm run asyncapi`,
    ).toBe(true);
  });

  it('has a channel for every subject family an agent sends or hears', () => {
    const doc = parse(checkedIn) as Doc;
    const addresses = new Set(
      Object.values(doc.channels).flatMap(({ address }) =>
        address ? [address.replace(/\{(?!prefix\})[^}]+\}/g, '*')] : [],
      ),
    );
    const families = [
      ...BUS_ACCESS.filter((access) => access.send.includes('agent') || access.hear.includes('agent')).map(
        (access) => access.family,
      ),
      AgentInbox.family,
    ];
    const missing = families.map((family) => subject('{prefix}', family)).filter((name) => !addresses.has(name));
    expect(missing, 'add a channel for each to tools/asyncapi/template.yaml, then run npm run asyncapi').toEqual([]);
  });

  it('names the reply headers the contract names', () => {
    const { messages } = (parse(checkedIn) as Doc).components;
    expect(Object.keys(messages.InboxMessage.headers?.properties ?? {})).toContain(ReplyHeaders.replyTo);
    expect(Object.keys(messages.ReplicaReply.headers?.properties ?? {})).toContain(ReplyHeaders.ack);
  });
});

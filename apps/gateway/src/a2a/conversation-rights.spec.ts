import { describe, expect, it } from 'vitest';
import type { RuntimeGrant } from '@mcpgw/grants';
import { agentCaller, grantCaller } from '../auth/caller';
import { apiKeyPrincipal, type OAuthPrincipal } from '../auth/principal';
import { conversationMeta, conversationRefusal } from './conversation-rights';

const oauth = (tools?: string[]): OAuthPrincipal => ({
  kind: 'oauth',
  id: 'oauth:x',
  callerId: 'oauth:x',
  agentId: 'a',
  issuer: 'https://issuer.example',
  subject: 'alice',
  scopes: ['mcp'],
  ...(tools && { tools }),
});

const grant: RuntimeGrant = {
  id: '00000000-0000-4000-8000-000000000000',
  workspaceId: 'w',
  agentId: 'a',
  taskId: 't',
  tools: ['echo'],
  credentials: [],
  issuedAt: new Date(),
  expiresAt: new Date(Date.now() + 60_000),
};

describe('conversational messages: who may send them', () => {
  it('an API key and an OAuth token without a tools claim may', () => {
    expect(conversationRefusal(agentCaller(apiKeyPrincipal('k1', 'a')))).toBeUndefined();
    expect(conversationRefusal(agentCaller(oauth()))).toBeUndefined();
  });

  // A credential limited to named skills would escape its limit through a conversation.
  it('a grant and an OAuth token limited to named tools may not', () => {
    expect(conversationRefusal(grantCaller(grant))).toMatch(/grant calls only the skills it names/);
    expect(conversationRefusal(agentCaller(oauth(['echo'])))).toMatch(/token calls only the skills it names/);
  });

  it("tells the agent an OAuth caller's identity, never its token", () => {
    expect(conversationMeta(agentCaller(oauth()))).toEqual({
      principal: { issuer: 'https://issuer.example', subject: 'alice', scopes: ['mcp'] },
    });
    expect(conversationMeta(agentCaller(apiKeyPrincipal('k1', 'a')))).toBeUndefined();
  });
});

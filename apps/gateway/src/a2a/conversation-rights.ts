import { principalCallMeta } from '../auth/principal';
import type { Caller } from '../auth/caller';

/**
 * Why this caller may not send a conversational message (a message that names
 * no skill), or undefined when it may. A credential limited to named skills (a
 * RuntimeGrant's tool list, an OAuth token's tools claim) may use only those:
 * a conversation reaches the agent outside every skill, so it would escape the
 * limit. An API key, or a token without the claim, may.
 */
export function conversationRefusal(caller: Caller): string | undefined {
  if (caller.via === 'grant') return 'a grant calls only the skills it names: name one in metadata.skill';
  if (caller.principal.kind === 'oauth' && caller.principal.tools !== undefined)
    return 'this token calls only the skills it names: name one in metadata.skill';
  return undefined;
}

/** What the agent is told about the caller of a conversational message (as for a skill: an OAuth user's identity). */
export function conversationMeta(caller: Caller): Record<string, unknown> | undefined {
  return caller.via === 'agent' ? principalCallMeta(caller.principal) : undefined;
}

import { AGENT_ID_PATTERN, InvalidRequestError } from '@mcpgw/contracts';
import type { AgentsStore } from '../agents/agents.store';
import type { ApiKeysStore } from '../auth/api-keys.store';

export interface AdminDeps {
  agents: AgentsStore;
  apiKeys: ApiKeysStore;
}

export interface Parsed {
  words: string[];
  flags: Record<string, string | boolean>;
}

export interface CommandOutput {
  /** For --json. */
  json: unknown;
  /** For people. */
  text: string;
}

type Command = (deps: AdminDeps, args: Parsed) => Promise<CommandOutput>;

export const USAGE = `usage: npm run admin -- <command> [--json]

  agent list                                  list agents and their tool counts
  agent create --id <agent> --workspace <ws>  create an agent (pods also create theirs)
  apikey create --agent <agent> [--label L]   mint an API key; the key is printed once
  apikey list [--agent <agent>]               list keys (ids only, never secrets)
  apikey revoke <key-id>                      revoke a key at once on every gateway`;

/** Every command, by its first two words. */
export const COMMANDS: Record<string, Command> = {
  'agent list': async ({ agents }) => {
    const list = await agents.list();
    return {
      json: list,
      text: list.length ? list.map((a) => `${a.id}\tworkspace=${a.workspace_id}\ttools=${a.tools}`).join('\n') : '(no agents)',
    };
  },
  'agent create': async ({ agents }, { flags }) => {
    const id = requireFlag(flags, 'id');
    const workspace = requireFlag(flags, 'workspace');
    for (const value of [id, workspace]) {
      if (!AGENT_ID_PATTERN.test(value)) throw new InvalidRequestError(`${value}: use 1-64 of A-Z a-z 0-9 _ -`);
    }
    await agents.ensure(id, workspace);
    return { json: { id, workspace_id: workspace }, text: `agent ${id} (workspace ${workspace})` };
  },
  'apikey create': async ({ apiKeys }, { flags }) => {
    const created = await apiKeys.create(requireFlag(flags, 'agent'), optionalFlag(flags, 'label'));
    return {
      json: created,
      text: `API key ${created.id} for agent ${created.agent_id}\n${created.key}\n(shown once: store it now)`,
    };
  },
  'apikey list': async ({ apiKeys }, { flags }) => {
    const list = await apiKeys.list(optionalFlag(flags, 'agent'));
    return {
      json: list,
      text: list.length
        ? list.map((k) => `${k.id}\tagent=${k.agent_id}\t${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}`).join('\n')
        : '(no keys)',
    };
  },
  'apikey revoke': async ({ apiKeys }, { words }) => {
    const id = words[2];
    if (!id) throw new InvalidRequestError('apikey revoke needs the key id');
    const revoked = await apiKeys.revoke(id);
    return { json: revoked, text: `revoked ${revoked.id} (agent ${revoked.agent_id})` };
  },
};

function requireFlag(flags: Parsed['flags'], name: string): string {
  const value = flags[name];
  if (typeof value !== 'string' || value === '') throw new InvalidRequestError(`--${name} <value> is required`);
  return value;
}

function optionalFlag(flags: Parsed['flags'], name: string): string | undefined {
  const value = flags[name];
  return typeof value === 'string' ? value : undefined;
}

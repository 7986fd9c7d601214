import { InvalidRequestError } from '@mcpgw/contracts';
import { retriesGet } from '../idempotency/rendered-again';
import type { Command } from './commands';
import { optionalFlag, requireFlag } from './flags';
import { agentRecords, recordLimit, taskStatus } from './operations/records';
import type { IdempotencyRecordView } from './operator-records.store';

/**
 * The operator's reads of an agent's records (operations/records.ts, shared with
 * the management API), and the personal access tokens' list and revocation.
 */
export const RECORD_COMMANDS: Record<string, Command> = {
  'pat list': async ({ pats }) => {
    const list = await pats.list();
    return {
      json: list,
      text: list.length
        ? list
            .map((p) => `${p.id}\t${p.label ?? '-'}\t${p.revoked_at ? `revoked ${p.revoked_at}` : 'active'}`)
            .join('\n')
        : '(no personal access tokens)',
    };
  },
  'pat revoke': async ({ pats }, { words }) => {
    if (!words[2]) throw new InvalidRequestError('pat revoke needs the token id');
    const revoked = await pats.revoke(words[2]);
    return { json: revoked, text: `revoked personal access token ${revoked.id}` };
  },
  'session list': async ({ agents, records }, { flags }) => {
    const agentId = requireFlag(flags, 'agent');
    const list = await agentRecords(agents, agentId, () =>
      records.sessions(agentId, recordLimit(optionalFlag(flags, 'limit')), flags.open === true),
    );
    return {
      json: list,
      text: list.length
        ? list
            .map(
              (s) =>
                `${s.id}\t${s.principal}\tchannel=${s.channel_id}\t${s.ended_at ? `ended ${s.ended_at}` : `last seen ${s.last_seen_at}`}`,
            )
            .join('\n')
        : '(no MCP sessions)',
    };
  },
  'idempotency list': async ({ agents, records }, { flags }) => {
    const agentId = requireFlag(flags, 'agent');
    const list = await agentRecords(agents, agentId, () =>
      records.idempotencyRecords(agentId, recordLimit(optionalFlag(flags, 'limit')), optionalFlag(flags, 'caller')),
    );
    return {
      json: list,
      text: list.length
        ? list.map((r) => `${r.key}\t${r.caller}\t${r.tool_id}\t${recordState(r)}\texpires ${r.expires_at}`).join('\n')
        : '(no idempotency records)',
    };
  },
  'idempotency show': async ({ agents, records }, { flags }) => {
    const agentId = requireFlag(flags, 'agent');
    const record = await agentRecords(agents, agentId, () =>
      records.idempotencyRecord(agentId, requireFlag(flags, 'caller'), requireFlag(flags, 'key')),
    );
    return { json: record, text: JSON.stringify(record, null, 2) };
  },
  'task list': async ({ agents, records }, { flags }) => {
    const agentId = requireFlag(flags, 'agent');
    const list = await agentRecords(agents, agentId, () =>
      records.tasks(agentId, recordLimit(optionalFlag(flags, 'limit')), taskStatus(optionalFlag(flags, 'status'))),
    );
    return {
      json: list,
      text: list.length
        ? list.map((t) => `${t.id}\t${t.status}\t${t.tool}\t${t.principal}\tupdated ${t.updated_at}`).join('\n')
        : '(no tasks)',
    };
  },
  'task show': async ({ records }, { words }) => {
    if (!words[2]) throw new InvalidRequestError('task show needs the task id');
    const task = await records.task(words[2]);
    return { json: task, text: JSON.stringify(task, null, 2) };
  },
};

/** `idempotency list`'s words for what a retry with the record's key gets (`retriesGet`). */
const RECORD_STATES = {
  stored: 'completed (replayed to retries)',
  rendered: 'kept (retries get the reply rendered again)',
  'in flight': 'in flight',
} as const;

function recordState(record: IdempotencyRecordView): string {
  return RECORD_STATES[retriesGet(record.replayable, record.surface)];
}

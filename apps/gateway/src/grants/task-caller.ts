import type { RuntimeGrant } from '@mcpgw/grants';

/** Who calls on surface B: the grant's task (idempotency keys, quotas and files are per task). */
export function taskCaller(grant: RuntimeGrant): string {
  return `task:${grant.workspaceId}/${grant.taskId}`;
}

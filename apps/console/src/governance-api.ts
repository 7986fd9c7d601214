import type { Answered, Schemas } from './api';

/**
 * The management API's governance routes as the console reads them: the
 * document's own schemas (docs/admin-openapi.yaml: AuditRecord, the audit page,
 * ToolChange): the audit trail (apps/gateway/src/audit/README.md) and tool
 * pinning (apps/gateway/src/tool-pinning/README.md).
 */
export type AuditRecord = Schemas['AuditRecord'];
export type AuditKind = AuditRecord['kind'];
export const AUDIT_KINDS = [
  'tool_call',
  'admin_action',
  'auth_failure',
  'tool_change',
] as const satisfies readonly AuditKind[];

/** `GET /audit`: newest first; `next` is the `before` of the older page (null: none). */
export type AuditPage = Answered<'listAudit'>;

export type ToolChange = Schemas['ToolChange'];
/** A tool's definition as its agent registered it (docs/asyncapi.yaml, SkillDefinition). */
export type ToolDefinition = ToolChange['proposed'][number];
export type ToolChangeList = Answered<'listToolChanges'>;

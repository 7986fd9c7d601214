/**
 * The management API's governance routes as the console reads them
 * (docs/admin-openapi.yaml: AuditRecord, the audit page, ToolChange):
 * the audit trail (apps/gateway/src/audit/README.md) and tool pinning
 * (apps/gateway/src/tool-pinning/README.md).
 */
export const AUDIT_KINDS = ['tool_call', 'admin_action', 'auth_failure', 'tool_change'] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];

export interface AuditRecord {
  /** `<day>/<writer>`: the hash chain the record is in. */
  chain: string;
  seq: number;
  kind: AuditKind;
  at: string;
  surface: string | null;
  principal: string | null;
  agent_id: string | null;
  tool: string | null;
  call_id: string | null;
  outcome: string | null;
  error_code: string | null;
  duration_ms: number | null;
  pod_id: string | null;
  replayed: boolean | null;
  /** SHA-256 (hex) of the call's canonical arguments. */
  arguments_digest: string | null;
  /** Only with AUDIT_ARGUMENTS=full or redacted. */
  arguments?: unknown;
  detail: Record<string, unknown> | null;
  prev_hash: string;
  hash: string;
}

/** `GET /audit`: newest first; `next` is the `before` of the older page (null: none). */
export interface AuditPage {
  items: AuditRecord[];
  next: string | null;
}

/** A tool's definition as its agent registered it (docs/asyncapi.yaml, SkillDefinition). */
export interface ToolDefinition {
  name: string;
  description?: string;
  input_schema?: unknown;
  [field: string]: unknown;
}

export interface ToolChange {
  agent_id: string;
  version: number;
  status: 'pending' | 'approved' | 'rejected' | 'superseded';
  created_at: string;
  decided_at: string | null;
  decided_by: string | null;
  /** The new and changed definitions. */
  proposed: ToolDefinition[];
  /** The approved definitions of the changed tools when the change was proposed. */
  approved_before: ToolDefinition[];
  diff: {
    tool: string;
    kind: 'new' | 'changed';
    /** Every leaf that differs, by its JSON Pointer into the definition. */
    changes: { path: string; before?: unknown; after?: unknown }[];
  }[];
}

export interface ToolChangeList {
  items: ToolChange[];
}

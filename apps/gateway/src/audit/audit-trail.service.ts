import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { auditEntry } from './audit-record';
import { auditedArguments, redactedKeys } from './audit-arguments';
import { AuditWriter } from './audit-writer.service';
import { RefusalCounter, type Refusal } from './auth-failures';

/** A tool call as it ended, on any surface. */
export interface AuditedCall {
  surface: string;
  principal: string;
  agentId: string;
  tool: string;
  callId?: string;
  /** `ok`, `tool_error`, or the error kind. */
  outcome: string;
  errorCode?: string;
  durationMs: number;
  podId?: string;
  replayed: boolean;
  arguments: Record<string, unknown>;
}

/** An operator's action: what, on what, by whom, and how it ended. */
export interface AuditedAction {
  surface: 'cli' | 'admin-api';
  principal: string;
  action: string;
  target?: Record<string, unknown>;
  agentId?: string;
  /** `ok`, or the error's code. */
  outcome: string;
  status?: number;
}

/**
 * What the rest of the gateway tells the audit trail (README.md here): every
 * method takes what happened, makes the row and hands it to the writer, in
 * memory. Nothing here waits on the database: a call's answer never does.
 */
@Injectable()
export class AuditTrail implements OnModuleInit, OnApplicationShutdown {
  private readonly redact: RegExp;
  private readonly refusals: RefusalCounter;
  private refusalTimer?: NodeJS.Timeout;

  constructor(
    private readonly writer: AuditWriter,
    @Inject(GATEWAY_ENV) private readonly env: GatewayEnv,
  ) {
    this.redact = redactedKeys(env.AUDIT_REDACT);
    this.refusals = new RefusalCounter(env.AUDIT_REFUSAL_WINDOW_SECONDS * 1000);
  }

  get enabled(): boolean {
    return this.writer.enabled;
  }

  onModuleInit(): void {
    if (!this.enabled) return;
    // Each window's refusals, once the window is over.
    const every = Math.min(10_000, this.env.AUDIT_REFUSAL_WINDOW_SECONDS * 1000);
    this.refusalTimer = setInterval(() => this.recordRefusals(), every).unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.refusalTimer);
    this.recordRefusals(true);
  }

  toolCall(call: AuditedCall): void {
    if (!this.enabled) return;
    this.writer.append(
      auditEntry('tool_call', {
        surface: call.surface,
        principal: call.principal,
        agent_id: call.agentId,
        tool: call.tool.slice(0, 512),
        call_id: call.callId ?? null,
        outcome: call.outcome,
        error_code: call.errorCode ?? null,
        duration_ms: call.durationMs,
        pod_id: call.podId ?? null,
        replayed: call.replayed,
        ...auditedArguments(call.arguments, this.env.AUDIT_ARGUMENTS, this.redact),
      }),
    );
  }

  adminAction(action: AuditedAction): void {
    if (!this.enabled) return;
    this.writer.append(
      auditEntry('admin_action', {
        surface: action.surface,
        principal: action.principal,
        agent_id: action.agentId ?? null,
        outcome: action.outcome,
        error_code: action.status === undefined ? null : String(action.status),
        detail: { action: action.action, ...(action.target && { target: action.target }) },
      }),
    );
  }

  /** A refused credential: counted, written once its window is over. */
  refused(refusal: Refusal): void {
    if (this.enabled) this.refusals.add(refusal);
  }

  /** A tool-definition change of an agent: proposed, accepted, approved, rejected, refused. */
  toolChange(change: { agentId: string; version?: number; outcome: string; principal: string; tools: string[] }): void {
    if (!this.enabled) return;
    this.writer.append(
      auditEntry('tool_change', {
        surface: change.principal === 'cli' ? 'cli' : change.principal.startsWith('admin:') ? 'admin-api' : 'bus',
        principal: change.principal,
        agent_id: change.agentId,
        outcome: change.outcome,
        detail: { ...(change.version !== undefined && { version: change.version }), tools: change.tools },
      }),
    );
  }

  /** Write what waits now (the CLI before it exits; tests). */
  flush(): Promise<void> {
    this.recordRefusals(true);
    return this.writer.flush();
  }

  private recordRefusals(all = false): void {
    for (const refusal of this.refusals.take(new Date(), all)) {
      this.writer.append(
        auditEntry('auth_failure', {
          at: refusal.window,
          surface: refusal.surface,
          principal: refusal.source,
          agent_id: refusal.agentId ?? null,
          outcome: 'refused',
          error_code: String(refusal.status),
          detail: { count: refusal.count, window_seconds: this.env.AUDIT_REFUSAL_WINDOW_SECONDS },
        }),
      );
    }
  }
}

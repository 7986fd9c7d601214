import { LOG_LEVELS, type LogLevel } from '@mcpgw/contracts';
import { decodeHeaderValue } from './header-value';
import type { JsonRpcId } from './json-rpc';
import { ALL_PROTOCOL_VERSIONS, STATELESS_PROTOCOL_VERSION } from './versions';

/** The `_meta` keys every 2026-07-28 request carries. */
export const StatelessMeta = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

/** Error codes the 2026-07-28 revision added. */
export const StatelessCode = {
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
} as const;

/** Methods 2026-07-28 removed: a stateless request for them is an unknown method. */
const REMOVED = new Set(['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']);

/** Methods whose target travels in the Mcp-Name header too. */
const NAMED: Record<string, 'name' | 'uri' | 'taskId'> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  // Tasks (io.modelcontextprotocol/tasks): Mcp-Name carries the task id.
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

export type StatelessCheck =
  | { ok: true; logLevel?: LogLevel; clientCapabilities: Record<string, unknown> }
  | { ok: false; status: number; id: JsonRpcId | null; code: number; message: string; data?: unknown };

/**
 * A request of the stateless revision: its body says so in `_meta`, or its
 * MCP-Protocol-Version header does. Everything else is served the legacy way
 * (sessions, initialize), on the same endpoint.
 */
export function isStatelessRequest(body: unknown, versionHeader: string | undefined): boolean {
  if (versionHeader === STATELESS_PROTOCOL_VERSION) return true;
  const meta = metaOf(body);
  return meta !== undefined && StatelessMeta.protocolVersion in meta;
}

/** The per-request rules of 2026-07-28: required `_meta`, a supported version, headers that agree. */
export function checkStatelessRequest(
  body: { id?: JsonRpcId; method: string; params?: Record<string, unknown> },
  headers: { version?: string; method?: string; name?: string },
): StatelessCheck {
  const id = body.id ?? null;
  const meta = metaOf(body) ?? {};
  const version = meta[StatelessMeta.protocolVersion];
  const capabilities = meta[StatelessMeta.clientCapabilities];
  if (
    typeof version !== 'string' ||
    typeof capabilities !== 'object' ||
    capabilities === null ||
    Array.isArray(capabilities)
  ) {
    return fail(
      400,
      id,
      -32602,
      `_meta must carry ${StatelessMeta.protocolVersion} and ${StatelessMeta.clientCapabilities}`,
    );
  }
  if (headers.version !== version) {
    return fail(
      400,
      id,
      StatelessCode.HeaderMismatch,
      `Header mismatch: MCP-Protocol-Version must be ${version}, as in _meta`,
    );
  }
  if (version !== STATELESS_PROTOCOL_VERSION) {
    return fail(400, id, StatelessCode.UnsupportedProtocolVersion, `Unsupported protocol version: ${version}`, {
      supported: ALL_PROTOCOL_VERSIONS,
      requested: version,
    });
  }
  if (headers.method !== body.method) {
    return fail(400, id, StatelessCode.HeaderMismatch, `Header mismatch: Mcp-Method must be ${body.method}`);
  }
  const named = NAMED[body.method];
  const name = headers.name === undefined ? undefined : decodeHeaderValue(headers.name.trim());
  if (named && (!name?.ok || name.value !== body.params?.[named])) {
    return fail(400, id, StatelessCode.HeaderMismatch, `Header mismatch: Mcp-Name must be params.${named}`);
  }
  if (REMOVED.has(body.method))
    return fail(404, id, -32601, `Method not found: ${body.method} (removed in ${STATELESS_PROTOCOL_VERSION})`);
  const level = meta[StatelessMeta.logLevel];
  const clientCapabilities = meta[StatelessMeta.clientCapabilities] as Record<string, unknown>;
  return {
    ok: true,
    clientCapabilities,
    ...(LOG_LEVELS.includes(level as LogLevel) ? { logLevel: level as LogLevel } : {}),
  };
}

function metaOf(body: unknown): Record<string, unknown> | undefined {
  const meta = (body as { params?: { _meta?: unknown } } | null)?.params?._meta;
  return typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>) : undefined;
}

function fail(status: number, id: JsonRpcId | null, code: number, message: string, data?: unknown): StatelessCheck {
  return { ok: false, status, id, code, message, ...(data === undefined ? {} : { data }) };
}

/**
 * MCP protocol revisions this gateway speaks with sessions (the `initialize`
 * handshake), newest first. `initialize` answers with the client's version
 * when supported, else our newest.
 */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;

/** The stateless revision: no handshake, no sessions, `_meta` on every request. */
export const STATELESS_PROTOCOL_VERSION = '2026-07-28';

/** Every revision, for server/discover. */
export const ALL_PROTOCOL_VERSIONS = [STATELESS_PROTOCOL_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS];
export const LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0];
/** What a request without MCP-Protocol-Version is taken to speak (spec, 2025-06-18). */
export const DEFAULT_PROTOCOL_VERSION = '2025-03-26';

export function negotiateVersion(requested: unknown): string {
  return typeof requested === 'string' && (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(requested)
    ? requested
    : LATEST_PROTOCOL_VERSION;
}

export function isSupportedVersion(version: string): boolean {
  return (ALL_PROTOCOL_VERSIONS as readonly string[]).includes(version);
}

/** Only 2025-03-26 allowed JSON-RPC batches (2025-06-18 removed them). */
export function allowsBatches(version: string): boolean {
  return version === '2025-03-26';
}

/** From 2025-11-25 on, SSE streams open with a priming event (an event id, empty data). */
export function primesStreams(version: string | undefined): boolean {
  return version !== undefined && version >= '2025-11-25';
}

export const SERVER_INFO = { name: 'mcp-agent-gateway', version: '0.1.0' } as const;

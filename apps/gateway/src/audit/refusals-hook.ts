import type { FastifyInstance } from 'fastify';
import type { AuditTrail } from './audit-trail.service';

/** The surface a public route belongs to, from its path. */
export function surfaceOfPath(path: string): string {
  if (path.startsWith('/workspaces/')) {
    if (path.endsWith('/mcp/http')) return 'mcp-b';
    if (path.includes('/a2a')) return 'a2a';
    return 'rest';
  }
  if (path.startsWith('/a2a/')) return 'a2a';
  if (path.startsWith('/api/v1/files')) return 'files';
  if (path.includes('/webhooks')) return 'webhooks';
  if (path.startsWith('/api/v1/')) return 'rest';
  if (/^\/[^/]+\/mcp\/?$/.test(path)) return 'mcp-a';
  return 'http';
}

/**
 * Every refused credential of the public port (401, 403) is counted for the
 * audit trail, per source address, surface and minute (`auth_failure` rows),
 * whichever surface refused it: one hook, after the answer is sent.
 */
export function auditRefusals(fastify: FastifyInstance, trail: AuditTrail): void {
  if (!trail.enabled) return;
  fastify.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode;
    if (status === 401 || status === 403) {
      const params = (request.params ?? {}) as Record<string, unknown>;
      const agent = params.agent_id ?? params.agentId ?? params.agent;
      trail.refused({
        source: request.ip,
        surface: surfaceOfPath(request.url.split('?', 1)[0]),
        status,
        ...(typeof agent === 'string' && { agentId: agent.slice(0, 128) }),
      });
    }
    done();
  });
}

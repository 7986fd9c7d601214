import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { checkReadiness, type ReadinessCheck } from './readiness';

export interface ManagementEndpoints {
  checks: readonly ReadinessCheck[];
  registry: Registry;
  /** True once the service drains (SIGTERM): `/ready` answers 503 whatever the checks say. */
  draining?: () => boolean;
  /**
   * Told when a check's state changes (`ok` → a reason and back), with the error of a
   * check that rejected: the log gets what `/ready` does not show.
   */
  onChange?: (name: string, state: string, cause?: unknown) => void;
  /** How long each check may take (default 2 s). */
  checkTimeoutMs?: number;
}

/** The management port, listening; `markDraining` turns `/ready` to 503 for good (libs/runtime/README.md). */
export interface ManagementServer {
  server: Server;
  port: number;
  markDraining(): void;
}

/**
 * The management port: `/health` (liveness: the process answers, nothing else is
 * touched), `/ready` (readiness: every dependency answers, each named with a state
 * that is never an error's text: readiness.ts) and `/metrics`
 * (Prometheus). Apart from the public and internal ports, so probes and scrapes
 * can be let in where callers are not, and callers never see either.
 */
export function managementHandler({ checks, registry, draining, onChange, checkTimeoutMs }: ManagementEndpoints) {
  const last = new Map<string, string>(checks.map((c) => [c.name, 'ok']));
  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = (request.url ?? '/').split('?', 1)[0];
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return send(response, 405, { error: 'method not allowed' });
    switch (path) {
      case '/health':
        return send(response, 200, { status: 'ok' });
      case '/ready': {
        const { ready, body, causes } = await checkReadiness(checks, checkTimeoutMs);
        for (const [name, state] of Object.entries(body.checks)) {
          if (last.get(name) === state) continue;
          last.set(name, state);
          onChange?.(name, state, causes[name]);
        }
        // A draining service takes no new work: the load balancer must stop sending it any.
        if (draining?.()) {
          return send(response, 503, { status: 'not_ready', checks: { ...body.checks, shutdown: 'draining' } });
        }
        return send(response, ready ? 200 : 503, body);
      }
      case '/metrics':
        response.writeHead(200, { 'content-type': registry.contentType });
        response.end(await registry.metrics());
        return;
      default:
        return send(response, 404, { error: 'not found' });
    }
  };
}

/** Listen on `host:port` (port 0: any free port); resolves with the server once it listens. */
export async function startManagementServer(
  endpoints: ManagementEndpoints,
  host: string,
  port: number,
): Promise<ManagementServer> {
  let draining = false;
  const handle = managementHandler({ ...endpoints, draining: () => draining });
  const server = createServer((request, response) => {
    handle(request, response).catch(() => send(response, 500, { error: 'internal error' }));
  });
  server.keepAliveTimeout = 5_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port, markDraining: () => void (draining = true) };
}

function send(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) return void response.end();
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

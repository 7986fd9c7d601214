import { readFileSync, readdirSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { join } from 'node:path';

/** What the conformance e2e tests share: the Node 22 they run the suites on, the key proxy, reading a run. */
export { NODE_22, node22 } from '@mcpgw/devstack';

/** Every check of the run that is a FAILURE or a WARNING, one line each (a warning fails a baseline run). */
export function checksNotPassing(out: string): string[] {
  return readdirSync(out).flatMap((dir) => {
    const checks = JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')) as {
      id: string;
      status: string;
      errorMessage?: string;
      description?: string;
    }[];
    return checks
      .filter((check) => check.status === 'FAILURE' || check.status === 'WARNING')
      .map(
        (check) =>
          `${check.status} ${dir.replace(/-\d{4}-\d\d-\d\dT.*$/, '')} ${check.id}: ${check.errorMessage ?? check.description ?? ''}`,
      );
  });
}

/** The `details` of check `id` in the run of server scenario `scenario` (its directory: `server-<scenario>-<time>`). */
export function checkDetails(out: string, scenario: string, id: string): Record<string, unknown> | undefined {
  const dir = readdirSync(out).find((name) => name.replace(/-\d{4}-\d\d-\d\dT.*$/, '') === `server-${scenario}`);
  if (!dir) return undefined;
  const checks = JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')) as {
    id: string;
    details?: Record<string, unknown>;
  }[];
  return checks.find((check) => check.id === id)?.details;
}

/**
 * The conformance suites' client sends no credentials, so a small proxy in
 * front of the gateway adds the agent key (the gateway is not weakened). It
 * forwards everything else unchanged (Host and Origin too: the suites test
 * DNS-rebinding protection through it) and streams both ways, so SSE passes.
 */
export async function startKeyProxy(
  gatewayUrl: string,
  apiKey: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(gatewayUrl);
  const proxy: Server = createServer((req, res) => {
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, 'x-agent-api-key': apiKey },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.flushHeaders();
        answer.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(String(error));
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as { port: number }).port}`,
    async close() {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}

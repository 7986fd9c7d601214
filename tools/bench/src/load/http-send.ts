import { request, type Agent } from 'node:http';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One request over the load generator's keep-alive agent, the body read whole as text:
 * what every lean client (MCP, REST, A2A) sends, so each costs the generator the same.
 */
export function httpSend(
  url: URL,
  agent: Agent,
  method: 'POST' | 'DELETE',
  headers: Record<string, string>,
  body?: string,
): Promise<HttpAnswer> {
  const sent =
    body === undefined
      ? headers
      : { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const req = request(
      { hostname: url.hostname, port: url.port, path: url.pathname + url.search, method, headers: sent, agent },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

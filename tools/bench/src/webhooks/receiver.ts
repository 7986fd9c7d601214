import { createServer } from 'node:http';
import type { Arrival, ReceiverReport, ReceiverRequest } from './protocol';

/**
 * `node receiver.js` (forked with IPC by the bench): the live webhook receiver.
 * It listens on a free loopback port (told to the parent), answers every POST
 * 204 at once, before reading the body, and verifies nothing (no signature:
 * the bench measures the sender, not a receiver's HMAC). For each delivery it
 * keeps the arrival time (epoch ms, taken when the request is handed to it)
 * and what the body says: the type, the event's `timestamp`, and the call's
 * tag, the `#<tag> ` the load generator put at the start of the echoed text,
 * which the event's `data.result.text` carries back.
 */
let arrivals: Arrival[] = [];

const TAG = /^#([0-9a-z.]+) /;

function send(report: ReceiverReport): void {
  process.send!(report);
}

const server = createServer((req, res) => {
  const atMs = performance.timeOrigin + performance.now();
  res.writeHead(204).end();
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => (body += chunk));
  req.on('end', () => {
    const arrival: Arrival = { atMs, id: String(req.headers['webhook-id'] ?? '') };
    try {
      const event = JSON.parse(body) as { type?: string; timestamp?: string; data?: { result?: { text?: string } } };
      arrival.type = event.type;
      arrival.timestamp = event.timestamp;
      arrival.tag = TAG.exec(event.data?.result?.text ?? '')?.[1];
    } catch {
      arrival.type = 'unparsable body';
    }
    arrivals.push(arrival);
  });
});

server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  send({ type: 'listening', port: typeof address === 'object' && address ? address.port : 0 });
});

process.on('message', (request: ReceiverRequest) => {
  if (request.type === 'collect') {
    send({ type: 'arrivals', arrivals });
    arrivals = [];
  }
});
process.on('disconnect', () => process.exit(0));

import { connect } from 'nats';
import { createServer } from 'node:http';

/**
 * `node floor-responder.js <nats url> <subject>`: the far end of the machine
 * floor (see machine-floor.ts). Answers every NATS request on <subject> with
 * its own payload, and every HTTP request with a small JSON body; sends its
 * HTTP port to the parent (IPC) once both are listening.
 */
async function main(): Promise<void> {
  const [natsUrl, subject] = process.argv.slice(2);
  const nc = await connect({ servers: natsUrl, noAsyncTraces: true });
  nc.subscribe(subject, { callback: (_error, msg) => msg.respond(msg.data) });
  await nc.flush();
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'ok' }] } });
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(body));
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send!({ port: typeof address === 'object' && address ? address.port : 0 });
  });
}

main().catch((error: Error) => {
  console.error(`floor responder: ${error.message}`);
  process.exit(1);
});

import { connect, createServer } from 'node:net';

/**
 * `node round-robin-proxy.js <port> <upstream port>...`: a TCP proxy on
 * 127.0.0.1:<port> that hands each new connection to the next upstream in turn.
 */
const [port, ...upstreams] = process.argv.slice(2).map(Number);
let next = 0;

createServer((client) => {
  const upstream = connect(upstreams[next++ % upstreams.length], '127.0.0.1');
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  client.pipe(upstream).pipe(client);
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close).on('close', close);
  upstream.on('error', close).on('close', close);
}).listen(port, '127.0.0.1');

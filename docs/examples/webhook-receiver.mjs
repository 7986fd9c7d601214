// A webhook receiver that verifies every delivery with the `standardwebhooks` package.
//   WEBHOOK_SECRET=whsec_… PORT=8787 node docs/examples/webhook-receiver.mjs
// then register it (127.0.0.1:8787 must be in WEBHOOK_ALLOWED_HOSTS of the gateway and the admin CLI):
//   npm run admin -- webhook add --agent demo-agent --url http://127.0.0.1:8787/hooks --events tool_call.completed,tool_call.failed
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const webhook = new Webhook(process.env.WEBHOOK_SECRET);
const seen = new Set(); // webhook-id: the same on every retry, so a repeat is recognised

createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    try {
      const event = webhook.verify(body, req.headers); // throws unless a signature matches and the timestamp is recent
      const id = req.headers['webhook-id'];
      if (!seen.has(id)) {
        seen.add(id);
        console.log(id, event.type, JSON.stringify(event.data));
      }
      res.writeHead(204).end();
    } catch (error) {
      console.error('refused:', error.message);
      res.writeHead(400).end();
    }
  });
}).listen(Number(process.env.PORT ?? 8787), '127.0.0.1');

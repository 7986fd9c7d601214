import { connectMcp, freePort, startTestStack, type TestStack } from '@mcpgw/devstack';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookReceiver } from './support/webhook-receiver';

const OLD_KEY = 'webhook-rotation-old-key-0123456789abcdef';
const NEW_KEY = 'webhook-rotation-new-key-0123456789abcdef';
/** The stack (and the admin CLI) start on the old key. */
const RECEIVER_PORT = await freePort();
const ENV = { WEBHOOK_SECRET_KEY: OLD_KEY, WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${RECEIVER_PORT}` };
const GATEWAY_ENV = { WEBHOOK_RETRY_BASE_MS: '100', WEBHOOK_RETRY_MAX_MS: '400', WEBHOOK_POLL_INTERVAL_MS: '100' };
/** Mid-rotation: the new key seals, the old one still opens. */
const ROTATING = { WEBHOOK_SECRET_KEY: NEW_KEY, WEBHOOK_SECRET_PREVIOUS_KEYS: OLD_KEY };
/** After it: the old key is gone. */
const ROTATED = { WEBHOOK_SECRET_KEY: NEW_KEY };

interface Created {
  id: string;
  secret: string;
}
interface ResealReport {
  resealed: number;
  current: number;
  unreadable: string[];
}

/**
 * WEBHOOK_SECRET_KEY changed in place (deploy/k8s/README.md, "Rotating secrets"):
 * deliveries never stop, and `webhook reseal-secrets` leaves nothing that needs the old key.
 */
describe('WEBHOOK_SECRET_KEY rotated in place', () => {
  let env: TestStack;
  let receiver: WebhookReceiver;
  let db: Client;

  const add = (path: string) =>
    env.stack.admin<Created>(
      'webhook',
      'add',
      '--agent',
      env.agentId,
      '--url',
      receiver.url(path),
      '--events',
      'tool_call.completed',
    );
  /** The only gateway, started again on the same port with `keys`. */
  const restartGateway = async (keys: Record<string, string>) => {
    const port = new URL(env.gatewayUrls[0]).port;
    await env.stack.serving(env.gatewayUrls[0]).kill();
    await env.stack.startGateway({ ...GATEWAY_ENV, GATEWAY_PORT: port, ...keys });
  };
  const echo = async (text: string) => {
    const mcp = await connectMcp(env.mcpUrl(0), env.apiKey);
    try {
      await mcp.client.callTool({ name: 'echo', arguments: { text } });
    } finally {
      await mcp.close().catch(() => undefined);
    }
  };
  const sealed = async (id: string) =>
    (await db.query(`SELECT secret, previous_secret FROM gateway.webhooks WHERE id = $1`, [id])).rows[0] as {
      secret: Buffer;
      previous_secret: Buffer | null;
    };

  beforeAll(async () => {
    env = await startTestStack({ env: ENV, gatewayEnv: GATEWAY_ENV });
    receiver = await new WebhookReceiver().start(RECEIVER_PORT);
    db = new Client({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await receiver?.stop();
    await env?.stop();
  });

  it('the old key as a previous key keeps every webhook signing; after reseal-secrets the new key alone does', async () => {
    const plain = await add('/plain');
    const rotating = await add('/rotating');
    // A secret rotation under way too: its previous secret must survive the key change.
    const rotated = await env.stack.admin<Created>('webhook', 'rotate-secret', rotating.id);
    receiver.verify('/plain', { secret: plain.secret });
    receiver.verify('/rotating', { old: rotating.secret, new: rotated.secret });
    const expectSigned = async (round: number) => {
      await expect.poll(() => receiver.at('/plain').length, { timeout: 10_000 }).toBe(round);
      await expect.poll(() => receiver.at('/rotating').length, { timeout: 10_000 }).toBe(round);
      expect(receiver.at('/plain')[round - 1].verifiedWith).toEqual(['secret']);
      expect(receiver.at('/rotating')[round - 1].verifiedWith.sort()).toEqual(['new', 'old']);
    };

    await restartGateway(ROTATING);
    await echo('signed mid-rotation');
    await expectSigned(1);

    const before = await sealed(rotating.id);
    expect(await env.stack.adminWith<ResealReport>(ROTATING, 'webhook', 'reseal-secrets')).toEqual({
      resealed: 2,
      current: 0,
      unreadable: [],
    });
    const after = await sealed(rotating.id);
    expect(after.secret.equals(before.secret)).toBe(false);
    expect(after.previous_secret!.equals(before.previous_secret!)).toBe(false);
    // Run again: nothing left to do.
    expect(await env.stack.adminWith<ResealReport>(ROTATING, 'webhook', 'reseal-secrets')).toEqual({
      resealed: 0,
      current: 2,
      unreadable: [],
    });

    await restartGateway(ROTATED);
    await echo('signed after the rotation');
    await expectSigned(2);
  });

  it('a secret no configured key opens is reported and left as it was', async () => {
    // Sealed with OLD_KEY, which ROTATED no longer names.
    const orphan = await add('/orphan');
    const before = await sealed(orphan.id);
    expect(await env.stack.adminWith<ResealReport>(ROTATED, 'webhook', 'reseal-secrets')).toEqual({
      resealed: 0,
      current: 2,
      unreadable: [orphan.id],
    });
    expect((await sealed(orphan.id)).secret.equals(before.secret)).toBe(true);
  });
});

import { FilesApi, FilesApiError } from '@mcpgw/files-client';
import { connectMcp, freePort, startTestStack, type McpConnection, type TestStack } from '@mcpgw/devstack';
import { createHash, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_BYTES,
  SIGNING_KEYS,
  downloadUrl as signedUrl,
  localBackend,
  rowOf,
  s3Backend,
  type Backend,
} from './support/file-backends';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/*
 * The gateway's memory while it streams 100 MB each way is measured alone, in
 * files-memory.e2e.spec.ts; this file runs beside others.
 */
interface Summary {
  files: { name: string; mime_type: string | null; size: number; sha256: string; head: string }[];
}

describe.each([
  ['filesystem', localBackend],
  ['S3 (s3rver)', s3Backend],
])('files and attachments, %s storage', (name, makeBackend: () => Promise<Backend>) => {
  let backend: Backend;
  let env: TestStack;
  let db: Client;
  let base: string;
  let files: FilesApi;
  let mcp: McpConnection;
  /** Another gateway on this storage and URL keys, with `extra` settings (stopped by the test). */
  const replica = (extra: Record<string, string> = {}) =>
    env.stack.startGateway({ ...backend.env(), FILES_URL_SIGNING_KEYS: SIGNING_KEYS, ...extra });

  const grantFor = async (task: string) =>
    (
      await env.stack.admin<{ grant: string }>(
        'grant',
        'mint',
        '--workspace',
        'demo',
        '--agent',
        env.agentId,
        '--task',
        task,
        '--tools',
        'summarize_pdf,echo',
      )
    ).grant;

  const surfaceB = async (grant: string, args: Record<string, unknown>) => {
    const response = await fetch(`${base}/workspaces/demo/agents/${env.agentId}/mcp/http`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${grant}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'req_1',
        method: 'tools/call',
        params: { name: 'summarize_pdf', arguments: args },
      }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  const messageCount = async () =>
    Number((await db.query('SELECT count(*)::int AS n FROM messaging.messages')).rows[0].n);

  /** The signed download URL the gateway gave the agent (as the agent saw it: made here). */
  const downloadUrl = (fileId: string, expiresAt?: Date) => signedUrl(base, fileId, expiresAt);

  beforeAll(async () => {
    backend = await makeBackend();
    env = await startTestStack({
      gatewayEnv: {
        ...backend.env(),
        FILES_URL_SIGNING_KEYS: SIGNING_KEYS,
        FILES_MAX_BYTES: String(MAX_BYTES),
        FILES_PURGE_INTERVAL_MS: '300',
      },
    });
    base = env.gatewayUrls[0];
    files = new FilesApi({ baseUrl: base, apiKey: env.apiKey });
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
    db = new Client({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
  });

  afterAll(async () => {
    await mcp?.close();
    await db?.end();
    await env?.stop();
    await backend?.stop();
  });

  it('surface A: upload with FilesApi, tools/call summarize_pdf with the official SDK: the agent hashes the same bytes', async () => {
    const bytes = Buffer.concat([Buffer.from('%PDF-1.7 mock document\n'), randomBytes(200_000)]);
    const fileId = await files.upload(bytes, { filename: 'report.pdf', contentType: 'application/pdf' });
    const result = await mcp.client.callTool({
      name: 'summarize_pdf',
      arguments: { attachments: [{ file_id: fileId }] },
    });
    expect(result.isError).toBeFalsy();
    const summary = result.structuredContent as unknown as Summary;
    expect(summary.files).toHaveLength(1);
    expect(summary.files[0]).toMatchObject({
      name: 'report.pdf',
      mime_type: 'application/pdf',
      size: bytes.length,
      sha256: sha256(bytes),
    });
    expect(summary.files[0].head.startsWith('%PDF-1.7 mock document')).toBe(true);

    // Ids are the source documents' form, file_<hex>; the same file by the UUID form handed out before works too.
    expect(fileId).toMatch(/^file_[0-9a-f]{32}$/);
    const hex = fileId.slice('file_'.length);
    const uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    const byUuid = await mcp.client.callTool({
      name: 'summarize_pdf',
      arguments: { attachments: [{ file_id: uuid }] },
    });
    expect(byUuid.isError).toBeFalsy();
    expect((byUuid.structuredContent as unknown as Summary).files[0].sha256).toBe(sha256(bytes));
  });

  it('surface B: upload with FilesApi under a RuntimeGrant, the same call on the task-scoped endpoint', async () => {
    const grant = await grantFor('T-files');
    const asTask = new FilesApi({ baseUrl: base, grant });
    const bytes = randomBytes(123_457);
    const uploaded = await asTask.uploadFile(Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]), {
      filename: 'scan.pdf',
      contentType: 'application/pdf',
      size: bytes.length,
    });
    expect(uploaded.sha256).toBe(sha256(bytes));
    const answer = await surfaceB(grant, {
      attachments: [{ file_id: uploaded.file_id, filename: 'renamed.pdf' }],
    });
    expect(answer.status).toBe(200);
    const output = answer.body.result.structuredContent.output as Summary;
    expect(output.files[0]).toMatchObject({ name: 'renamed.pdf', size: bytes.length, sha256: sha256(bytes) });
  });

  it('any replica serves any file: uploaded through one gateway, downloaded and attached through another', async () => {
    const other = await replica({ FILES_MAX_BYTES: String(MAX_BYTES) });
    const bytes = randomBytes(70_000);
    const fileId = await files.upload(bytes, { filename: 'r.bin', contentType: 'application/octet-stream' });
    const fromOther = await fetch(downloadUrl(fileId).replace(base, other.url));
    expect(Buffer.from(await fromOther.arrayBuffer())).toEqual(bytes);
    const viaOther = await connectMcp(`${other.url}/${env.agentId}/mcp`, env.apiKey);
    try {
      const result = await viaOther.client.callTool({
        name: 'summarize_pdf',
        arguments: { attachments: [{ file_id: fileId }] },
      });
      expect((result.structuredContent as unknown as Summary).files[0].sha256).toBe(sha256(bytes));
    } finally {
      await viaOther.close();
      await other.process.stop();
    }
  });

  it.runIf(name === 'filesystem')(
    "each caller's live files are held to FILES_QUOTA_FILES and FILES_QUOTA_BYTES: 429, another caller unaffected",
    async () => {
      const small = await replica({ FILES_QUOTA_FILES: '3', FILES_QUOTA_BYTES: '1000' });
      try {
        const as = async (task: string) => new FilesApi({ baseUrl: small.url, grant: await grantFor(task) });
        const [first, second] = await Promise.all([as(`T-quota-a-${Date.now()}`), as(`T-quota-b-${Date.now()}`)]);
        const presign = (api: FilesApi, size: number) =>
          api.presignUpload({ filename: 'q.bin', contentType: 'application/octet-stream', size });
        // Pending (presigned, not uploaded) files count with their declared size.
        await presign(first, 600);
        await expect(presign(first, 500)).rejects.toMatchObject({
          status: 429,
          code: 'file_quota_exceeded',
          message: expect.stringContaining('FILES_QUOTA_BYTES'),
        });
        // Uploaded ones too; concurrent presigns cannot both take the last room.
        await first.upload(Buffer.alloc(300), { filename: 'u.bin', contentType: 'application/octet-stream' });
        const racing = await Promise.allSettled([presign(first, 50), presign(first, 50)]);
        expect(racing.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
        expect((racing.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({
          status: 429,
          message: expect.stringContaining('FILES_QUOTA_FILES'),
        });
        // Another caller of the same agent has its own room.
        await expect(presign(second, 1000)).resolves.toMatchObject({ file_id: expect.any(String) });
      } finally {
        await small.process.stop();
      }
    },
  );

  it.runIf(name.startsWith('S3'))(
    'a gateway whose object store is down still starts and serves MCP; its uploads answer 503',
    async () => {
      const closedPort = await freePort();
      const cut = await env.stack.startGateway({
        FILES_STORAGE: 's3',
        FILES_S3_BUCKET: 'unreachable',
        FILES_S3_ENDPOINT: `http://127.0.0.1:${closedPort}`,
        FILES_S3_ACCESS_KEY_ID: 'x',
        FILES_S3_SECRET_ACCESS_KEY: 'y',
        FILES_URL_SIGNING_KEYS: SIGNING_KEYS,
      });
      try {
        const viaCut = await connectMcp(`${cut.url}/${env.agentId}/mcp`, env.apiKey);
        expect((await viaCut.client.listTools()).tools.length).toBeGreaterThan(0);
        await viaCut.close();
        const cutFiles = new FilesApi({ baseUrl: cut.url, apiKey: env.apiKey });
        await expect(
          cutFiles.upload(Buffer.from('x'), { filename: 'x.txt', contentType: 'text/plain' }),
        ).rejects.toMatchObject({ status: 503, code: 'storage_unavailable' });
      } finally {
        await cut.process.stop();
      }
    },
  );

  it.runIf(name === 'filesystem')(
    'an upload may take FILES_UPLOAD_TIMEOUT_MS, every other request HTTP_REQUEST_TIMEOUT_MS: 408 past either',
    async () => {
      const slow = await replica({ HTTP_REQUEST_TIMEOUT_MS: '1000', FILES_UPLOAD_TIMEOUT_MS: '5000' });
      /** Send the head, then the body's pieces `gapMs` apart (all of it, or `stopAfter` pieces); the answer and when. */
      const send = (url: string, head: string, pieces: Buffer[], gapMs: number, stopAfter = pieces.length) =>
        new Promise<{ answer: string; afterMs: number }>((resolve, reject) => {
          const started = Date.now();
          const { hostname, port, pathname, search } = new URL(url);
          const socket = connect(Number(port), hostname, async () => {
            socket.write(head.replace('{path}', `${pathname}${search}`));
            for (const piece of pieces.slice(0, stopAfter)) {
              await delay(gapMs);
              if (!socket.writable) return;
              socket.write(piece);
            }
          });
          let answer = '';
          socket.setEncoding('utf8').on('data', (chunk: string) => {
            answer += chunk;
            if (/\r\n\r\n[\s\S]*\}$/.test(answer) || answer.startsWith('HTTP/1.1 408')) socket.end();
          });
          socket.on('close', () => resolve({ answer, afterMs: Date.now() - started }));
          socket.on('error', reject);
          setTimeout(() => reject(new Error('the server kept the connection open')), 15_000).unref();
        });
      const upload = async (pieces: Buffer[], gapMs: number, stopAfter?: number) => {
        const size = pieces.reduce((n, piece) => n + piece.length, 0);
        const { upload_url } = await files.presignUpload({ filename: 's.bin', contentType: 'text/plain', size });
        const head = `PUT {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: ${size}\r\n\r\n`;
        return send(upload_url.replace(base, slow.url), head, pieces, gapMs, stopAfter);
      };
      try {
        const pieces = [0, 1, 2, 3].map((i) => Buffer.from(`piece ${i} `));
        // 2 s of upload, twice HTTP_REQUEST_TIMEOUT_MS: stored.
        const slowUpload = await upload(pieces, 500);
        expect(slowUpload.answer).toMatch(/^HTTP\/1\.1 200/);
        expect(slowUpload.answer).toContain('"size":32');
        expect(slowUpload.afterMs).toBeGreaterThan(1_500);
        // An MCP request's body is still held to HTTP_REQUEST_TIMEOUT_MS.
        const mcpHead =
          `POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
          `Accept: application/json, text/event-stream\r\nX-Agent-API-Key: ${env.apiKey}\r\nContent-Length: 200\r\n\r\n`;
        const mcpBody = await send(`${slow.url}/${env.agentId}/mcp`, mcpHead, [Buffer.from('{"jsonrpc":')], 10);
        expect(mcpBody.answer).toMatch(/^HTTP\/1\.1 408/);
        expect(mcpBody.afterMs).toBeLessThan(4_000);
        // An upload that stalls is cut at FILES_UPLOAD_TIMEOUT_MS.
        const stalled = await upload(pieces, 10, 1);
        expect(stalled.answer).toMatch(/^HTTP\/1\.1 408/);
        expect(stalled.afterMs).toBeGreaterThanOrEqual(4_500);
      } finally {
        await slow.process.stop();
      }
    },
  );

  it('an upload left by a gateway that died is taken again once no request can still be running it', async () => {
    const leased = () => replica({ FILES_UPLOAD_TIMEOUT_MS: '1000' });
    const dying = await leased();
    const { file_id, upload_url } = await files.presignUpload({
      filename: 'l.bin',
      contentType: 'application/octet-stream',
      size: 1000,
    });
    // Half the bytes, then nothing: the gateway holds the upload when it is killed.
    const stalled = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(new Uint8Array(500)),
    });
    const put = (url: string, body: BodyInit) =>
      fetch(url, {
        method: 'PUT',
        body,
        headers: { 'content-type': 'application/octet-stream' },
        duplex: 'half',
      } as RequestInit);
    void put(upload_url.replace(base, dying.url), stalled).catch(() => undefined);
    const state = async () =>
      (await db.query('SELECT state FROM gateway.files WHERE id = $1', [rowOf(file_id)])).rows[0].state;
    for (const deadline = Date.now() + 10_000; (await state()) !== 'uploading'; await delay(50)) {
      if (Date.now() > deadline) throw new Error('the upload never started');
    }
    await dying.process.kill();

    const other = await leased();
    try {
      const bytes = randomBytes(1000);
      const early = await put(upload_url.replace(base, other.url), bytes);
      // Right after: it may still be running somewhere, for all the gateway knows.
      if (early.status !== 200) {
        expect(early.status).toBe(409);
        await delay(3_500);
        const retried = await put(upload_url.replace(base, other.url), bytes);
        expect(retried.status).toBe(200);
        expect(((await retried.json()) as any).sha256).toBe(sha256(bytes));
      }
      expect(await state()).toBe('uploaded');
    } finally {
      await other.process.stop();
    }
  });

  describe('a file that is not the caller’s to attach: -32602 on surface A, an invalid-arguments result on B; nothing invoked', () => {
    it('unknown, another caller’s, another agent’s, and expired files', async () => {
      const unknown = '0b6f3c1e-8d6a-4f0e-9a51-3c9c1f0d2b7a';
      const otherKey = await env.stack.admin<{ key: string }>('apikey', 'create', '--agent', env.agentId);
      const otherCallers = await new FilesApi({ baseUrl: base, apiKey: otherKey.key }).upload(Buffer.from('x'), {
        filename: 'a.txt',
        contentType: 'text/plain',
      });
      await env.stack.admin('agent', 'create', '--id', 'other-agent', '--workspace', 'demo');
      const otherAgentKey = await env.stack.admin<{ key: string }>('apikey', 'create', '--agent', 'other-agent');
      const otherAgents = await new FilesApi({ baseUrl: base, apiKey: otherAgentKey.key }).upload(Buffer.from('y'), {
        filename: 'b.txt',
        contentType: 'text/plain',
      });
      const expired = await files.upload(Buffer.from('z'), { filename: 'c.txt', contentType: 'text/plain' });
      await db.query(`UPDATE gateway.files SET expires_at = now() - interval '1 second' WHERE id = $1`, [
        rowOf(expired),
      ]);
      const pending = (await files.presignUpload({ filename: 'd.txt', contentType: 'text/plain', size: 1 })).file_id;

      const before = await messageCount();
      for (const [fileId, problem] of [
        [unknown, /no file .* of this agent and caller/],
        [otherCallers, /no file .* of this agent and caller/],
        [otherAgents, /no file .* of this agent and caller/],
        [expired, /has expired|no file/],
        [pending, /is not uploaded/],
      ] as const) {
        const refused = mcp.client.callTool({
          name: 'summarize_pdf',
          arguments: { attachments: [{ file_id: fileId }] },
        });
        await expect(refused).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(problem) });
      }
      const grant = await grantFor('T-foreign');
      const answer = await surfaceB(grant, { attachments: [{ file_id: otherCallers }] });
      expect(answer.status).toBe(200);
      expect(answer.body.result.isError).toBe(true);
      expect(answer.body.result.content[0].text).toMatch(/Invalid arguments for summarize_pdf: .*no file/);
      expect(await messageCount()).toBe(before);
    });
  });

  it('attachments are part of the idempotency fingerprint', async () => {
    const first = await files.upload(Buffer.from('one'), { filename: '1.txt', contentType: 'text/plain' });
    const second = await files.upload(Buffer.from('two'), { filename: '2.txt', contentType: 'text/plain' });
    const call = (fileId: string) =>
      mcp.client.callTool({
        name: 'summarize_pdf',
        arguments: { attachments: [{ file_id: fileId }], idempotency_key: 'files-fingerprint' },
      });
    const ran = await call(first);
    expect((ran.structuredContent as unknown as Summary).files[0].sha256).toBe(sha256(Buffer.from('one')));
    expect(await call(first)).toMatchObject({ _meta: { 'mcpgw/idempotentReplay': true } });
    await expect(call(second)).rejects.toMatchObject({ code: -32602, data: { reason: 'idempotency_key_reused' } });
  });

  describe('signed URLs', () => {
    let fileId: string;
    let bytes: Buffer;

    beforeAll(async () => {
      bytes = Buffer.from(`hello, ${'x'.repeat(1000)} world`);
      fileId = await files.upload(bytes, { filename: 'résumé "final".txt', contentType: 'text/plain' });
    });

    it('download streams with Content-Type, Content-Length, Content-Disposition, and Range', async () => {
      const whole = await fetch(downloadUrl(fileId));
      expect(whole.status).toBe(200);
      expect(whole.headers.get('content-type')).toBe('text/plain');
      expect(whole.headers.get('content-length')).toBe(String(bytes.length));
      expect(whole.headers.get('content-disposition')).toBe(
        `attachment; filename="r_sum_ _final_.txt"; filename*=UTF-8''${encodeURIComponent('résumé "final".txt')}`,
      );
      expect(Buffer.from(await whole.arrayBuffer())).toEqual(bytes);

      const part = await fetch(downloadUrl(fileId), { headers: { range: 'bytes=7-16' } });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes 7-16/${bytes.length}`);
      expect(part.headers.get('content-length')).toBe('10');
      expect(Buffer.from(await part.arrayBuffer())).toEqual(bytes.subarray(7, 17));

      const head = await fetch(downloadUrl(fileId), { method: 'HEAD' });
      expect([head.status, head.headers.get('content-length'), await head.text()]).toEqual([
        200,
        String(bytes.length),
        '',
      ]);

      const tail = await fetch(downloadUrl(fileId), { headers: { range: 'bytes=-5' } });
      expect(await tail.text()).toBe('world');
      const outside = await fetch(downloadUrl(fileId), { headers: { range: `bytes=${bytes.length}-` } });
      expect(outside.status).toBe(416);
      expect(outside.headers.get('content-range')).toBe(`bytes */${bytes.length}`);
    });

    it('403 says which: tampered, expired, foreign file, wrong method', async () => {
      const refused = async (url: string, method = 'GET') => {
        const response = await fetch(url, { method });
        const body = (await response.json()) as { error: { code: string } };
        return [response.status, body.error.code];
      };
      const good = new URL(downloadUrl(fileId));
      const longer = new URL(good);
      longer.searchParams.set('expires', String(Number(good.searchParams.get('expires')) + 86_400));
      expect(await refused(longer.href)).toEqual([403, 'url_tampered']);
      const forged = new URL(good);
      forged.searchParams.set('sig', 'A'.repeat(43));
      expect(await refused(forged.href)).toEqual([403, 'url_tampered']);

      expect(await refused(downloadUrl(fileId, new Date(Date.now() - 1000)))).toEqual([403, 'url_expired']);

      const other = await files.upload(Buffer.from('other'), { filename: 'o.txt', contentType: 'text/plain' });
      const moved = new URL(good);
      moved.pathname = `/api/v1/files/${other}/content`;
      expect(await refused(moved.href)).toEqual([403, 'url_foreign_file']);

      const { upload_url } = await files.presignUpload({ filename: 'p.txt', contentType: 'text/plain', size: 3 });
      expect(await refused(upload_url, 'GET')).toEqual([403, 'url_wrong_method']);
      expect(await refused(good.href.replace(/&sig=[^&]*/, ''))).toEqual([403, 'url_malformed']);
    });

    it('the agent received an absolute signed URL it could use (the pod downloaded through it)', async () => {
      const result = await mcp.client.callTool({
        name: 'summarize_pdf',
        arguments: { attachments: [{ file_id: fileId }] },
      });
      expect((result.structuredContent as unknown as Summary).files[0].sha256).toBe(sha256(bytes));
    });
  });

  describe('uploads are checked against the declared size and type and FILES_MAX_BYTES', () => {
    const put = (url: string, body: BodyInit, headers: Record<string, string>) =>
      fetch(url, { method: 'PUT', body, headers, duplex: 'half' } as RequestInit);

    it('413 for a declared size over the limit', async () => {
      const refused = files.presignUpload({
        filename: 'big.bin',
        contentType: 'application/octet-stream',
        size: MAX_BYTES + 1,
      });
      await expect(refused).rejects.toMatchObject({ status: 413, code: 'file_too_large' });
      await expect(refused).rejects.toBeInstanceOf(FilesApiError);
    });

    it('413 for more bytes than declared, whether Content-Length says so or a chunked body does', async () => {
      const { upload_url } = await files.presignUpload({
        filename: 'a.bin',
        contentType: 'application/octet-stream',
        size: 10,
      });
      const declared = await put(upload_url, new Uint8Array(20), { 'content-type': 'application/octet-stream' });
      expect(declared.status).toBe(413);
      expect(((await declared.json()) as any).error.code).toBe('file_too_large');

      const chunked = Readable.toWeb(Readable.from([Buffer.alloc(8), Buffer.alloc(8)])) as ReadableStream;
      const streamed = await put(upload_url, chunked, { 'content-type': 'application/octet-stream' });
      expect(streamed.status).toBe(413);
      // Refused, not recorded: the same URL still takes the right bytes.
      const right = await put(upload_url, new Uint8Array(10), { 'content-type': 'application/octet-stream' });
      expect(right.status).toBe(200);
    });

    it('400 for fewer bytes, 415 for another content type, 409 once uploaded', async () => {
      const { upload_url } = await files.presignUpload({ filename: 'a.txt', contentType: 'text/plain', size: 10 });
      const short = await put(upload_url, new Uint8Array(5), { 'content-type': 'text/plain' });
      expect([short.status, ((await short.json()) as any).error.code]).toEqual([400, 'size_mismatch']);
      const wrongType = await put(upload_url, new Uint8Array(10), { 'content-type': 'image/png' });
      expect([wrongType.status, ((await wrongType.json()) as any).error.code]).toEqual([415, 'content_type_mismatch']);
      expect((await put(upload_url, new Uint8Array(10), { 'content-type': 'text/plain; charset=utf-8' })).status).toBe(
        200,
      );
      expect((await put(upload_url, new Uint8Array(10), { 'content-type': 'text/plain' })).status).toBe(409);
    });

    it('401 without a key or grant; 400 for a bad body', async () => {
      const anonymous = await fetch(`${base}/api/v1/files/presign-upload`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ filename: 'a', content_type: 'text/plain', size: 1 }),
      });
      expect(anonymous.status).toBe(401);
      const badKey = new FilesApi({ baseUrl: base, apiKey: 'bak_nope_nope' });
      await expect(badKey.presignUpload({ filename: 'a', contentType: 'text/plain', size: 1 })).rejects.toMatchObject({
        status: 401,
      });
      await expect(
        files.presignUpload({ filename: '../etc/passwd', contentType: 'text/plain', size: 1 }),
      ).rejects.toMatchObject({
        status: 400,
      });
      await expect(files.presignUpload({ filename: 'a', contentType: 'nonsense', size: 1 })).rejects.toMatchObject({
        status: 400,
      });
    });
  });

  it('expired files are purged with their bytes, in batches', { timeout: 60_000 }, async () => {
    const kept = await files.upload(Buffer.from('kept'), { filename: 'k.txt', contentType: 'text/plain' });
    const gone = await files.upload(Buffer.from('gone'), { filename: 'g.txt', contentType: 'text/plain' });
    expect(await backend.holds(rowOf(gone))).toBe(true);
    // More than one batch (100) of never-uploaded files.
    const unused = await Promise.all(
      Array.from({ length: 150 }, (_, i) =>
        files.presignUpload({ filename: `u${i}.txt`, contentType: 'text/plain', size: 1 }),
      ),
    );
    await db.query(`UPDATE gateway.files SET expires_at = now() - interval '1 second' WHERE id = ANY($1)`, [
      [gone, ...unused.map((u) => u.file_id)].map(rowOf),
    ]);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const left = Number(
        (await db.query(`SELECT count(*)::int AS n FROM gateway.files WHERE expires_at <= now()`)).rows[0].n,
      );
      if (left === 0) break;
      if (Date.now() > deadline) throw new Error(`${left} expired files not purged in 30 s`);
      await delay(100);
    }
    expect(await backend.holds(rowOf(gone))).toBe(false);
    expect(await backend.holds(rowOf(kept))).toBe(true);
    expect((await fetch(downloadUrl(gone))).status).toBe(404);
    expect((await fetch(downloadUrl(kept))).status).toBe(200);
  });
});

import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';

/**
 * One command of the Chrome DevTools protocol to a process started with
 * `--inspect` (its `ServiceProcess.inspectorUrl`), e.g.
 * `HeapProfiler.collectGarbage` before reading its memory. A minimal WebSocket
 * client (one text frame out, text frames in), so tests need no dependency.
 */
export function inspectorCommand(wsUrl: string, method: string, params: object = {}): Promise<unknown> {
  const url = new URL(wsUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let buffer = Buffer.alloc(0);
    let upgraded = false;
    const fail = (error: Error) => (socket.destroy(), reject(error));
    socket.setTimeout(30_000, () => fail(new Error(`${method}: no answer from ${wsUrl}`)));
    socket.on('error', fail);
    socket.on('connect', () =>
      socket.write(
        `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      ),
    );
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (!upgraded) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        if (!buffer.subarray(0, 12).toString().startsWith('HTTP/1.1 101'))
          return fail(new Error('no WebSocket upgrade'));
        upgraded = true;
        buffer = buffer.subarray(end + 4);
        socket.write(maskedTextFrame(JSON.stringify({ id: 1, method, params })));
      }
      for (;;) {
        const frame = readFrame(buffer);
        if (!frame) return;
        buffer = buffer.subarray(frame.length);
        if (frame.opcode !== 1) continue;
        const message = JSON.parse(frame.text) as { id?: number; result?: unknown; error?: { message: string } };
        if (message.id !== 1) continue;
        socket.end();
        return message.error ? reject(new Error(`${method}: ${message.error.message}`)) : resolve(message.result);
      }
    });
  });
}

/** A client's frame: final, text, masked (RFC 6455 5.2). */
function maskedTextFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = randomBytes(4);
  const size = payload.length;
  const header =
    size < 126
      ? Buffer.from([0x81, 0x80 | size])
      : size < 65_536
        ? Buffer.from([0x81, 0x80 | 126, size >> 8, size & 0xff])
        : Buffer.concat([Buffer.from([0x81, 0x80 | 127]), bigEndian64(size)]);
  const masked = Buffer.alloc(size);
  for (let i = 0; i < size; i++) masked[i] = payload[i] ^ mask[i % 4];
  return Buffer.concat([header, mask, masked]);
}

function bigEndian64(n: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(BigInt(n));
  return bytes;
}

/** A server's (unmasked) frame at the start of `buffer`, or undefined until it is whole. */
function readFrame(buffer: Buffer): { opcode: number; text: string; length: number } | undefined {
  if (buffer.length < 2) return undefined;
  let size = buffer[1] & 0x7f;
  let offset = 2;
  if (size === 126) {
    if (buffer.length < 4) return undefined;
    size = buffer.readUInt16BE(2);
    offset = 4;
  } else if (size === 127) {
    if (buffer.length < 10) return undefined;
    size = Number(buffer.readBigUInt64BE(2));
    offset = 10;
  }
  if (buffer.length < offset + size) return undefined;
  return { opcode: buffer[0] & 0x0f, text: buffer.subarray(offset, offset + size).toString(), length: offset + size };
}

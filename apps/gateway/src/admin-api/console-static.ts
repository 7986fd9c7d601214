import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, resolve, sep } from 'node:path';
import { AdminApiError, sendRefusal } from './admin-api-errors';

/** Where `npm run build` puts the console (apps/console/dist), from apps/gateway/{src,dist}/admin-api. */
export const CONSOLE_DIST = resolve(__dirname, '../../../console/dist');

/** The console's pages, under the management API's own origin (so no CORS). */
export const CONSOLE_PREFIX = '/console/';

/**
 * The console's pages may load scripts, styles, images and data from this
 * origin only: no inline script or style, no eval, no other site; no page may
 * frame them; forms post here alone. A script injected into a page (say through
 * a tool's description rendered by mistake as HTML) does not run.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

interface ConsoleFile {
  body: Buffer;
  type: string;
  /** Vite's hashed assets never change under their name; index.html always may. */
  immutable: boolean;
}

/**
 * Serves the built console under /console/ on the management server. The files
 * are read once at start into memory (a few hundred KB): a request names a key
 * of that map, never a path on disk, so nothing outside the build can be read.
 * Every page carries the strict CSP and refuses framing. The pages are public
 * (the login is one of them); the data behind them is the API, behind its guard.
 */
export function installConsole(fastify: FastifyInstance, dir = CONSOLE_DIST): void {
  const files = readConsole(dir);
  if (files.size === 0) {
    new Logger('AdminApi').warn({ msg: 'console not built: /console answers 503 (npm run build)', dir });
  }
  const send = (reply: FastifyReply, file: ConsoleFile | undefined) => {
    void reply
      .header('content-security-policy', CONSOLE_CSP)
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
      .header('cross-origin-opener-policy', 'same-origin')
      .header('cross-origin-resource-policy', 'same-origin');
    if (!file) {
      const refusal =
        files.size === 0
          ? new AdminApiError(503, 'unavailable', 'the console is not built (npm run build)')
          : new AdminApiError(404, 'not_found', 'no such console file');
      return sendRefusal(reply, reply.request, refusal);
    }
    if (file.immutable) void reply.header('cache-control', 'public, max-age=31536000, immutable');
    return reply.type(file.type).send(file.body);
  };
  fastify.get('/console', (_request, reply) => reply.redirect(CONSOLE_PREFIX, 302));
  fastify.get(CONSOLE_PREFIX, (_request, reply) => send(reply, files.get('index.html')));
  fastify.get<{ Params: { '*': string } }>(`${CONSOLE_PREFIX}*`, (request, reply) =>
    send(reply, files.get(request.params['*'])),
  );
}

/** Every file of the build, by its path under the prefix ("index.html", "assets/index-….js"). */
export function readConsole(dir: string): Map<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  if (!existsSync(join(dir, 'index.html'))) return files;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const name = relative(dir, path).split(sep).join('/');
    files.set(name, {
      body: readFileSync(path),
      type: TYPES[extname(name)] ?? 'application/octet-stream',
      immutable: name.startsWith('assets/'),
    });
  }
  return files;
}

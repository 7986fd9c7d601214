import { FilesApi } from '@mcpgw/files-client';
import { startTestStack, type TestStack } from '@mcpgw/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_BYTES,
  SIGNING_KEYS,
  localBackend,
  roundTrip,
  rssOf,
  s3Backend,
  type Backend,
} from './support/file-backends';

/**
 * The gateway streams files both ways, whatever their size: it never holds an
 * upload or a download whole. Measured by the gateway's resident memory, so
 * run alone (vitest.config.mts, E2E_ALONE): another file's stack on the same
 * two cores leaves V8 less time to collect, which the figure would count.
 */
describe.each([
  ['filesystem', localBackend],
  ['S3 (s3rver)', s3Backend],
])('the gateway’s memory while files stream, %s storage', (_name, makeBackend: () => Promise<Backend>) => {
  let backend: Backend;
  let env: TestStack;
  let base: string;
  let files: FilesApi;

  beforeAll(async () => {
    backend = await makeBackend();
    env = await startTestStack({
      pods: 0,
      gatewayEnv: { ...backend.env(), FILES_URL_SIGNING_KEYS: SIGNING_KEYS, FILES_MAX_BYTES: String(MAX_BYTES) },
    });
    base = env.gatewayUrls[0];
    files = new FilesApi({ baseUrl: base, apiKey: env.apiKey });
  });

  afterAll(async () => {
    await env?.stop();
    await backend?.stop();
  });

  /*
   * After a warm-up transfer of 8 MB, so that the first use of the code paths is not
   * counted. (From a cold process the first 50 MB upload peaked at 31-33 MB of growth,
   * mostly code warming up and sockets' read buffers V8 frees only at its next GC.)
   * Streaming, the growth stays flat as the file grows: 12-19 MB for 50 MB on a quiet machine,
   * up to 30 MB on a loaded CI (garbage V8 had not collected yet). 100 MB keeps the two cases
   * far apart: a gateway that held the upload whole grows by at least the file's size here
   * (checked by making it do so at 50 MB: about 50 MB).
   */
  it('a 100 MB upload and download keep the gateway’s RSS growth under 40 MB', { timeout: 120_000 }, async () => {
    const size = 100 * 1024 * 1024;
    const pid = env.stack.serving(base).pid!;
    await roundTrip(files, base, 8 * 1024 * 1024);
    const baseline = rssOf(pid);
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 10);
    try {
      await roundTrip(files, base, size);
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, rssOf(pid));
    expect(peak - baseline).toBeLessThan(40 * 1024 * 1024);
  });
});

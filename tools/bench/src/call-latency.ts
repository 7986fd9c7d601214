import { connectMcp, startTestStack, type McpConnection, type TestStack } from '@mcpgw/devstack';

/**
 * `npm run bench`: the time of one tools/call through the whole path
 * (gateway → NATS → message service → JetStream → pod and back), then the
 * throughput at many concurrent clients. Prints its figures; asserts nothing.
 *
 * Against a running stack: MCP_URL=http://localhost:3000/demo-agent/mcp MCP_KEY=bak_… npm run bench
 * Otherwise it starts a private stack (own database and bus prefix) and removes it after.
 *
 *   BENCH_SEQUENTIAL=1000  BENCH_CLIENTS=64  BENCH_SECONDS=10  BENCH_TOOL=echo
 */
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 1000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 64);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const TOOL = process.env.BENCH_TOOL ?? 'echo';
const ARGS = TOOL === 'echo' ? { text: 'benchmark' } : {};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function describe(label: string, latencies: number[], elapsedMs: number): string {
  const sorted = [...latencies].sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(2);
  return `${label}: ${sorted.length} calls in ${(elapsedMs / 1000).toFixed(1)} s = ${((sorted.length * 1000) / elapsedMs).toFixed(0)} calls/s; latency ms p50 ${f(percentile(sorted, 50))} p90 ${f(percentile(sorted, 90))} p99 ${f(percentile(sorted, 99))} max ${f(sorted.at(-1)!)}`;
}

async function timedCall(mcp: McpConnection): Promise<number> {
  const started = performance.now();
  const result = await mcp.client.callTool({ name: TOOL, arguments: ARGS });
  if (result.isError) throw new Error(`${TOOL} failed: ${JSON.stringify(result.content)}`);
  return performance.now() - started;
}

async function main(): Promise<void> {
  let stack: TestStack | undefined;
  let url = process.env.MCP_URL;
  let key = process.env.MCP_KEY;
  if (!url || !key) {
    process.stderr.write('starting a private stack…\n');
    stack = await startTestStack({
      env: {
        LOG_LEVEL: 'warn',
        DATABASE_POOL_SIZE: '20',
        INBOX_STORAGE: process.env.INBOX_STORAGE ?? 'file',
        POD_CONCURRENCY: process.env.POD_CONCURRENCY ?? '64',
      },
    });
    url = stack.mcpUrl();
    key = stack.apiKey;
  }
  try {
    const warm = await connectMcp(url, key);
    for (let i = 0; i < 100; i++) await timedCall(warm);

    const sequential: number[] = [];
    let started = performance.now();
    for (let i = 0; i < SEQUENTIAL; i++) sequential.push(await timedCall(warm));
    console.log(describe(`sequential, 1 client, ${TOOL}`, sequential, performance.now() - started));
    await warm.close();

    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => connectMcp(url!, key!)));
    const concurrent: number[] = [];
    const deadline = performance.now() + SECONDS * 1000;
    started = performance.now();
    await Promise.all(
      clients.map(async (mcp) => {
        while (performance.now() < deadline) concurrent.push(await timedCall(mcp));
      }),
    );
    console.log(describe(`concurrent, ${CLIENTS} clients, ${TOOL}`, concurrent, performance.now() - started));
    await Promise.all(clients.map((c) => c.close()));
  } finally {
    await stack?.stop();
  }
}

main().catch((error: Error) => {
  console.error(`bench failed: ${error.message}`);
  process.exit(1);
});

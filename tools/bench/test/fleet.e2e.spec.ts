import { describe, expect, it } from 'vitest';
import { runFleet } from '../src/agents/fleet';

/**
 * The smaller version of `npm run bench:agents` (issue 26): 200 agents in one
 * process, each with its own NATS credentials, start at once against one
 * stack; registration completes for every one, and every one answers its
 * tools/list and a call through the gateway. The figures are printed, not
 * asserted (docs/scaling.md has the 1,000-agent runs).
 */
describe('two hundred agents on one stack', () => {
  it('all register at once, and every agent answers', async () => {
    const figures = await runFleet({ agents: 200, clients: 8, seconds: 2 });
    console.log(JSON.stringify(figures));
    expect(figures.failures).toEqual([]);
    expect(figures.serving).toBe(200);
    expect(figures.inboxConsumers).toBe(200);
    expect(figures.toolsList).toMatchObject({ count: 200, errors: 0 });
    expect(figures.answered).toBe(200);
    expect(figures.spread.errors).toBe(0);
  }, 300_000);
});

import { describe, expect, it } from 'vitest';
import { DURATIONS, TOOLS, addCall, percentile, rowsOf, type ToolTable } from './tool-figures';

const call = (tool: string, duration_ms: number, failed = false) => ({ agent_id: 'a', tool, duration_ms, failed });

describe("the overview's per-tool figures", () => {
  it('counts calls and errors per tool and gives p50 and p99 (nearest rank)', () => {
    let table: ToolTable = new Map();
    for (let ms = 1; ms <= 100; ms++) table = addCall(table, call('echo', ms, ms % 10 === 0), ms);
    table = addCall(table, call('sleep', 7), 101);
    const [echo, sleep] = rowsOf(table);
    expect(echo).toMatchObject({ tool: 'echo', calls: 100, errors: 10, p50: 50, p99: 99 });
    expect(sleep).toMatchObject({ tool: 'sleep', calls: 1, errors: 0, p50: 7, p99: 7 });
    expect(percentile([], 50)).toBeUndefined();
  });

  it('keeps bounded memory: the last durations of a tool, the most recently called tools', () => {
    let table: ToolTable = new Map();
    for (let i = 0; i < DURATIONS + 500; i++) table = addCall(table, call('echo', i < 500 ? 1_000_000 : 1), i);
    const [echo] = rowsOf(table);
    expect(echo.durations).toHaveLength(DURATIONS);
    expect(echo).toMatchObject({ calls: DURATIONS + 500, p99: 1 });
    for (let i = 0; i < TOOLS + 5; i++) table = addCall(table, call(`t${i}`, 1), i);
    expect(table.size).toBe(TOOLS);
    expect(rowsOf(table).some((row) => row.tool === 'echo')).toBe(false);
  });

  it('leaves the table it was given as it was (React state)', () => {
    const before: ToolTable = new Map();
    addCall(before, call('echo', 1), 0);
    expect(before.size).toBe(0);
  });
});

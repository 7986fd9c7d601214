/** Percentiles over recorded latencies (nearest-rank on the sorted samples). */
export function summarise(
  latencies: Float64Array,
  count: number,
): { p50: number; p90: number; p99: number; max: number; mean: number } {
  if (count === 0) return { p50: NaN, p90: NaN, p99: NaN, max: NaN, mean: NaN };
  const sorted = latencies.slice(0, count).sort();
  const at = (p: number) => sorted[Math.min(count - 1, Math.ceil((p / 100) * count) - 1)];
  let sum = 0;
  for (const value of sorted) sum += value;
  return { p50: at(50), p90: at(90), p99: at(99), max: sorted[count - 1], mean: sum / count };
}

/** A growable buffer of latencies in ms. */
export class LatencyRecorder {
  private data = new Float64Array(1 << 16);
  count = 0;

  add(ms: number): void {
    if (this.count === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.count++] = ms;
  }

  summary() {
    return summarise(this.data, this.count);
  }
}

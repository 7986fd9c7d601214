import { parsePrometheus, type Sample } from '@mcpgw/devstack';

/** One Prometheus sample: `name{labels} value`. */
export type Series = Sample;

/** GET <url>/metrics of each app, parsed; an app that does not answer gives no samples. */
export async function scrape(targets: { name: string; url: string }[]): Promise<Map<string, Series[]>> {
  const out = new Map<string, Series[]>();
  await Promise.all(
    targets.map(async (target) => {
      try {
        const response = await fetch(`${target.url}/metrics`);
        out.set(target.name, response.ok ? parsePrometheus(await response.text()) : []);
      } catch {
        out.set(target.name, []);
      }
    }),
  );
  return out;
}

/** Sum of a metric over every app and label set, or undefined when no app exposes it. */
export function total(
  scraped: Map<string, Series[]>,
  name: string,
  where: (labels: Record<string, string>) => boolean = () => true,
): number | undefined {
  let sum: number | undefined;
  for (const series of scraped.values()) {
    for (const s of series) if (s.name === name && where(s.labels)) sum = (sum ?? 0) + s.value;
  }
  return sum;
}

/** Sums of a metric grouped by the value of one label (or a key made from the labels). */
export function totalsBy(
  scraped: Map<string, Series[]>,
  name: string,
  key: (labels: Record<string, string>) => string,
): Map<string, number> {
  const sums = new Map<string, number>();
  for (const series of scraped.values()) {
    for (const s of series) if (s.name === name) sums.set(key(s.labels), (sums.get(key(s.labels)) ?? 0) + s.value);
  }
  return sums;
}

/** One Prometheus sample: `name{labels} value`. */
export interface Series {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a text exposition, comments skipped; unparseable lines ignored. */
export function parseExposition(text: string): Series[] {
  const series: Series[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]] = pair[2];
    series.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return series;
}

/** GET <url>/metrics of each app, parsed; an app that does not answer gives no samples. */
export async function scrape(targets: { name: string; url: string }[]): Promise<Map<string, Series[]>> {
  const out = new Map<string, Series[]>();
  await Promise.all(
    targets.map(async (target) => {
      try {
        const response = await fetch(`${target.url}/metrics`);
        out.set(target.name, response.ok ? parseExposition(await response.text()) : []);
      } catch {
        out.set(target.name, []);
      }
    }),
  );
  return out;
}

/** Sum of a metric over every app and label set, or undefined when no app exposes it. */
export function total(scraped: Map<string, Series[]>, name: string, where: (labels: Record<string, string>) => boolean = () => true): number | undefined {
  let sum: number | undefined;
  for (const series of scraped.values()) {
    for (const s of series) if (s.name === name && where(s.labels)) sum = (sum ?? 0) + s.value;
  }
  return sum;
}

/** Sums of a metric grouped by the value of one label (or a key made from the labels). */
export function totalsBy(scraped: Map<string, Series[]>, name: string, key: (labels: Record<string, string>) => string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const series of scraped.values()) {
    for (const s of series) if (s.name === name) sums.set(key(s.labels), (sums.get(key(s.labels)) ?? 0) + s.value);
  }
  return sums;
}

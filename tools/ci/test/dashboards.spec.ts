import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  DASHBOARDS_DIR,
  dashboardFiles,
  dashboardProblems,
  dataPanels,
  expressionsOf,
  selectorsOf,
  substitute,
  type Dashboard,
} from './grafana/dashboards';

/**
 * The Grafana dashboards (deploy/observability/grafana/dashboards/, docs/operations/README.md
 * "Dashboards"): each file parses, has the `datasource` variable, every panel (those in rows
 * too) and target queries `${datasource}`, panel ids unique in a dashboard, uids unique
 * across them, every target an `expr`. Broken copies must fail the same check (a check
 * that passes anything is no check). That the expressions name real metrics and labels is
 * observability.e2e.spec.ts's: it runs them against a Prometheus scraping a live stack.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const files = dashboardFiles(join(root, DASHBOARDS_DIR));
const dashboards = files.map(({ file, text }) => ({ file, dashboard: JSON.parse(text) as Dashboard }));
const copy = <T>(value: T): T => structuredClone(value);

describe('Grafana dashboards', () => {
  it('are the four the operations guide lists', () => {
    expect(files.map((f) => f.file)).toEqual(['agent.json', 'bus-and-storage.json', 'overview.json', 'webhooks.json']);
  });

  it.each(files)('$file parses as JSON', ({ text }) => {
    expect(() => JSON.parse(text)).not.toThrow();
  });

  it.each(dashboards)('$file can be imported anywhere (datasource variable, ids, exprs)', ({ dashboard }) => {
    expect(dashboardProblems(dashboard)).toEqual([]);
    expect(expressionsOf(dashboard).length).toBeGreaterThan(3);
  });

  it('have distinct uids', () => {
    const uids = dashboards.map(({ dashboard }) => dashboard.uid);
    expect(new Set(uids).size).toBe(uids.length);
  });

  it('the latency panels show exemplars (a call id, linked to its trace)', () => {
    const overview = dashboards.find((d) => d.file === 'overview.json')!.dashboard;
    const latency = dataPanels(overview)
      .flatMap((p) => p.targets ?? [])
      .filter((t) => /mcpgw_tool_call_seconds_bucket/.test(t.expr ?? ''));
    expect(latency.length).toBeGreaterThan(0);
    expect(latency.every((t) => t.exemplar === true)).toBe(true);
  });

  it('the agent dashboard is per agent: its queries select $agent, and its variable lists agents', () => {
    const agent = dashboards.find((d) => d.file === 'agent.json')!.dashboard;
    const variable = agent.templating?.list?.find((v) => v.name === 'agent');
    expect(variable?.type).toBe('query');
    expect(JSON.stringify(variable?.query)).toContain('label_values(mcpgw_tool_calls_total, agent)');
    const selecting = expressionsOf(agent).filter(({ expr }) => expr.includes('$agent'));
    expect(selecting.length).toBeGreaterThan(5);
  });

  it('every expression takes its variables substituted, and none is left', () => {
    for (const { dashboard } of dashboards)
      for (const { expr } of expressionsOf(dashboard))
        expect(substitute(expr, { agent: 'a', interval: '30s' })).not.toMatch(/\$/);
    expect(() => substitute('rate(x{pod="$pod"}[5m])', { agent: 'a', interval: '30s' })).toThrow(/\$pod/);
  });

  it('names the series selectors of an expression, for the live check to query one by one', () => {
    expect(
      selectorsOf('sum(rate(mcpgw_a_total{x="1"}[5m])) / scalar(sum(rate(mcpgw_b_total[5m]))) - mcpgw:c:rate5m'),
    ).toEqual(['mcpgw_a_total{x="1"}', 'mcpgw_b_total', 'mcpgw:c:rate5m']);
  });

  describe('negative controls: a broken copy fails the same check', () => {
    const [first] = dashboards;
    const rowWithPanels = dashboards.find(({ dashboard }) => dashboard.panels?.some((p) => p.panels?.length));

    it('a collapsed row is there to be walked into', () => {
      expect(rowWithPanels).toBeDefined();
    });

    const breakages: [string, (d: Dashboard) => void, RegExp][] = [
      ['no uid', (d) => delete d.uid, /no uid/],
      ['an old schemaVersion', (d) => (d.schemaVersion = 27), /schemaVersion/],
      [
        'no datasource variable',
        (d) => (d.templating!.list = d.templating!.list!.filter((v) => v.name !== 'datasource')),
        /datasource` variable/,
      ],
      [
        'a panel on a fixed datasource',
        (d) => (dataPanels(d)[1].datasource = { type: 'prometheus', uid: 'P1809F7CD0C75ACF3' }),
        /datasource is not/,
      ],
      [
        'a target on a fixed datasource',
        (d) => (dataPanels(d)[0].targets![0].datasource = { type: 'prometheus', uid: 'prom' }),
        /datasource is not/,
      ],
      ['a duplicated panel id', (d) => (dataPanels(d)[2].id = dataPanels(d)[1].id), /used 2 times/],
      ['a target without expr', (d) => delete dataPanels(d)[0].targets![0].expr, /no expr/],
      ['a panel without targets', (d) => (dataPanels(d)[0].targets = []), /no targets/],
    ];
    it.each(breakages)('%s', (_name, breakIt, expected) => {
      const broken = copy(first.dashboard);
      breakIt(broken);
      expect(dashboardProblems(broken).join('\n')).toMatch(expected);
    });

    it('a panel inside a collapsed row on a fixed datasource', () => {
      const broken = copy(rowWithPanels!.dashboard);
      const row = broken.panels!.find((p) => p.panels?.length)!;
      row.panels![0].datasource = { type: 'prometheus', uid: 'prom' };
      expect(dashboardProblems(broken).join('\n')).toMatch(/datasource is not/);
    });

    it('a panel inside a collapsed row with the id of a top-level one', () => {
      const broken = copy(rowWithPanels!.dashboard);
      broken.panels!.find((p) => p.panels?.length)!.panels![0].id = broken.panels![1].id;
      expect(dashboardProblems(broken).join('\n')).toMatch(/used 2 times/);
    });

    it('a file that is not JSON', () => {
      expect(() => JSON.parse(files[0].text.replace('{', '{,'))).toThrow();
    });
  });
});

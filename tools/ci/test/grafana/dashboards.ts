import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Grafana dashboards of deploy/observability/grafana/dashboards/ as the checks read
 * them: a dashboard's panels (those inside a collapsed row too), its PromQL expressions,
 * and what a file must hold to be imported anywhere (`dashboardProblems`). Shared by the
 * static spec (dashboards.spec.ts) and the live one (observability.e2e.spec.ts).
 */
export const DASHBOARDS_DIR = 'deploy/observability/grafana/dashboards';

export interface Target {
  refId?: string;
  expr?: string;
  datasource?: { type?: string; uid?: string };
  exemplar?: boolean;
}
export interface Panel {
  id?: number;
  type?: string;
  title?: string;
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
  /** A collapsed row holds its panels. */
  panels?: Panel[];
}
export interface Variable {
  name: string;
  type: string;
  query?: unknown;
  datasource?: { type?: string; uid?: string };
}
export interface Dashboard {
  uid?: string;
  title?: string;
  schemaVersion?: number;
  panels?: Panel[];
  templating?: { list?: Variable[] };
}

/** Dashboards from 10.4 on write schemaVersion 39; older ones are migrated at import, silently. */
export const MIN_SCHEMA_VERSION = 39;
const DATASOURCE = '${datasource}';

/** Every `*.json` of `dir`: its file name and its text. */
export function dashboardFiles(dir: string): { file: string; text: string }[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => ({ file, text: readFileSync(join(dir, file), 'utf8') }));
}

/** Every panel of the dashboard, rows and the panels of collapsed rows included. */
export function panelsOf(dashboard: Dashboard): Panel[] {
  return (dashboard.panels ?? []).flatMap((panel) => [panel, ...(panel.panels ?? [])]);
}

/** The panels that show data (not rows). */
export function dataPanels(dashboard: Dashboard): Panel[] {
  return panelsOf(dashboard).filter((panel) => panel.type !== 'row');
}

/** Each query of the dashboard: where it is, and its PromQL. */
export function expressionsOf(dashboard: Dashboard): { where: string; expr: string }[] {
  return dataPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      where: `${dashboard.uid} panel ${panel.id} "${panel.title}" ${target.refId}`,
      expr: target.expr ?? '',
    })),
  );
}

/**
 * What keeps a dashboard from being imported into any Grafana with any Prometheus: a
 * datasource variable of type prometheus; every panel and target on `${datasource}`;
 * panel ids unique; a uid and a current schema version; every target a PromQL `expr`.
 * An empty list: none.
 */
export function dashboardProblems(dashboard: Dashboard): string[] {
  const problems: string[] = [];
  if (!dashboard.uid) problems.push('no uid');
  if (!dashboard.title) problems.push('no title');
  if (!((dashboard.schemaVersion ?? 0) >= MIN_SCHEMA_VERSION))
    problems.push(`schemaVersion ${dashboard.schemaVersion} < ${MIN_SCHEMA_VERSION}`);
  const variables = dashboard.templating?.list ?? [];
  const datasource = variables.find((v) => v.name === 'datasource');
  if (!datasource || datasource.type !== 'datasource' || datasource.query !== 'prometheus')
    problems.push('no `datasource` variable of type datasource, query prometheus');
  for (const variable of variables.filter((v) => v.type === 'query'))
    if (variable.datasource?.uid !== DATASOURCE) problems.push(`variable ${variable.name} not on ${DATASOURCE}`);
  const panels = dataPanels(dashboard);
  if (panels.length === 0) problems.push('no panels');
  const ids = new Map<number, number>();
  for (const panel of panelsOf(dashboard)) {
    if (typeof panel.id !== 'number') problems.push(`panel "${panel.title}" has no id`);
    else ids.set(panel.id, (ids.get(panel.id) ?? 0) + 1);
  }
  for (const [id, count] of ids) if (count > 1) problems.push(`panel id ${id} used ${count} times`);
  for (const panel of panels) {
    const name = `panel ${panel.id} "${panel.title}"`;
    if (panel.datasource?.uid !== DATASOURCE) problems.push(`${name}: datasource is not ${DATASOURCE}`);
    if (!panel.targets?.length) problems.push(`${name}: no targets`);
    for (const target of panel.targets ?? []) {
      if (!target.expr?.trim()) problems.push(`${name} ${target.refId}: no expr`);
      if (target.datasource && target.datasource.uid !== DATASOURCE)
        problems.push(`${name} ${target.refId}: datasource is not ${DATASOURCE}`);
    }
  }
  return problems;
}

/**
 * A dashboard expression as Prometheus itself takes it: Grafana's variables replaced
 * (`$agent` by the agent given, `$__rate_interval` and `$__interval` by `interval`).
 * A variable left over is an error: Prometheus would refuse it as a parse error anyway,
 * but this says which.
 */
export function substitute(expr: string, values: { agent: string; interval: string }): string {
  const out = expr
    .replaceAll('$__rate_interval', values.interval)
    .replaceAll('$__interval', values.interval)
    .replaceAll('$agent', values.agent)
    .replaceAll('${agent}', values.agent);
  const left = /\$\{?[A-Za-z_]\w*/.exec(out);
  if (left) throw new Error(`unknown dashboard variable ${left[0]} in: ${expr}`);
  return out;
}

/**
 * The series selectors of an expression (`mcpgw_…{…}` and recording rules `mcpgw:…`): each
 * must find series by itself, so a misspelt name under `scalar()` or beside `or vector(0)`,
 * which leave the whole expression a result, is caught too.
 */
export function selectorsOf(expr: string): string[] {
  return [...new Set([...expr.matchAll(/\bmcpgw[_:][A-Za-z0-9_:]*(?:\{[^}]*\})?/g)].map((m) => m[0]))];
}

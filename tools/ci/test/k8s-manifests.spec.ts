import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { httpRouteProblems } from './k8s/gateway-api';
import { prometheusRuleProblems, serviceMonitorProblems, type ServiceMonitor } from './k8s/prometheus-operator';
import { edgeProblems, gatewayRoutes, type EdgeSettings } from './k8s/public-edge';

/**
 * The Kubernetes manifests (deploy/k8s) render with kustomize, validate against the
 * Kubernetes OpenAPI schemas (kubernetes-models), and agree with the apps: entry files
 * that exist, environment variables that the apps' env classes declare, probes on the
 * management port the app listens on, the security and network rules of the README.
 * The examples that publish the gateway (an Ingress for ingress-nginx, a Gateway API
 * HTTPRoute, each on top of the prod overlay) route every path the gateway serves with
 * its timeouts and body sizes (./k8s/public-edge.ts; the HTTPRoute's CRD schema is
 * ./k8s/gateway-api.ts). The prod overlay's Prometheus Operator objects validate against
 * their CRDs' schemas (./k8s/prometheus-operator.ts), and its ServiceMonitors scrape each
 * app's management port through a Service that has it. docker-compose.yml is held to the
 * same port contract. Negative
 * controls feed broken copies of the rendered objects to the same checks, so the checks
 * are shown to fail.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const requireFromRoot = createRequire(join(root, 'package.json'));
const KUBECTL = process.env.KUBECTL ?? 'kubectl';
const OVERLAYS = ['dev', 'prod'] as const;
/** The prod overlay with the gateway published: through ingress-nginx, or a Gateway API route. */
const EDGE_EXAMPLES = ['ingress-nginx', 'gateway-api'] as const;
const APPS = ['gateway', 'message-service', 'agent-pod'] as const;
type App = (typeof APPS)[number];

/** What the port contract says each app listens on for /health, /ready and /metrics. */
const MANAGEMENT_PORT_DEFAULT: Record<App, number> = { gateway: 9000, 'message-service': 9100, 'agent-pod': 9200 };

// ---------------------------------------------------------------------------------------
// Inputs: the env classes, the rendered overlays, the example Secrets.

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [k: string]: any;
};

/**
 * Every variable an app reads: the keys of what its loadEnv returns for an empty
 * environment (validateEnv merges the properties of each env class it is given), so a
 * renamed or removed property is gone from this list at once.
 */
async function envNamesOf(app: App): Promise<Set<string>> {
  const module = (await import(resolve(root, `apps/${app}/src/config/${app}.env.ts`))) as {
    loadEnv: (env: object) => object;
  };
  const names = new Set(Object.keys(module.loadEnv({})));
  return names;
}

function yamlObjects(text: string): Obj[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length) throw new Error(doc.errors.map((e) => e.message).join('\n'));
      return doc.toJS() as Obj | null;
    })
    .filter((o): o is Obj => o !== null);
}

function kubectlStatus(): { ok: true } | { ok: false; absent: boolean; reason: string } {
  const run = spawnSync(KUBECTL, ['version', '--client'], { encoding: 'utf8' });
  if (run.error) {
    return {
      ok: false,
      absent: true,
      reason: `${KUBECTL} not found (${run.error.message}): deploy/k8s cannot be rendered; CI needs a kubectl ≥ 1.14 (see .ci/run)`,
    };
  }
  const out = `${run.stdout}${run.stderr}`;
  // kubectl ≥ 1.24 prints its kustomize version; 1.14-1.23 embed one without saying so
  // (v2.0.3 up to 1.20, Debian bookworm's kubernetes-client). The overlays keep to the
  // fields v2.0.3 knows (../../../deploy/k8s/README.md, "Kustomize versions").
  const minor = Number(/Minor:"(\d+)/.exec(out)?.[1] ?? /Client Version: v1\.(\d+)/.exec(out)?.[1] ?? 0);
  if (/Kustomize Version: v\d/.test(out) || minor >= 14) return { ok: true };
  return {
    ok: false,
    absent: false,
    reason: `${KUBECTL} (1.${minor}) has no kustomize: install kubectl ≥ 1.14 (Debian's kubernetes-client) or set KUBECTL to one.\n${out}`,
  };
}

/**
 * What kustomize may print on stderr, and nothing else: kustomize v5 warns about the
 * v2-era fields the overlays use so that kustomize v2.0.3 (kubectl 1.20) renders them too.
 */
const KNOWN_WARNING =
  /^# Warning: '(bases|patchesStrategicMerge|patchesJson6902)' is deprecated\. Please use '(resources|patches)' instead\. Run 'kustomize edit fix' to update your Kustomization automatically\.$/;

function unexpectedWarnings(stderr: string): string[] {
  return stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !KNOWN_WARNING.test(line));
}

/** `kubectl kustomize deploy/k8s/<dir>` (an overlay, or an example built on one). */
function renderText(dir: string, kubectl = KUBECTL): string {
  const run = spawnSync(kubectl, ['kustomize', join(root, 'deploy/k8s', dir)], {
    encoding: 'utf8',
    maxBuffer: 16 << 20,
  });
  if (run.status !== 0) throw new Error(`${kubectl} kustomize deploy/k8s/${dir} failed:\n${run.stderr}`);
  const unexpected = unexpectedWarnings(run.stderr);
  if (unexpected.length) throw new Error(`${kubectl} kustomize deploy/k8s/${dir} warned:\n${unexpected.join('\n')}`);
  return run.stdout;
}

function render(dir: string): Obj[] {
  return yamlObjects(renderText(dir));
}

/**
 * A rendering in a form two kustomize versions agree on: the generated names' content
 * hash (v2.0.3 hashes the name too, v5 does not) replaced by HASH, empty maps (v2.0.3
 * leaves `annotations: {}` on a merged ConfigMap) dropped, keys sorted.
 */
function comparable(text: string): string[] {
  const canon = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canon);
    if (v && typeof v === 'object') {
      const entries = Object.keys(v)
        .sort()
        .map((k) => [k, canon((v as Record<string, unknown>)[k])] as const)
        .filter(([, x]) => !(x && typeof x === 'object' && !Array.isArray(x) && Object.keys(x).length === 0));
      return Object.fromEntries(entries);
    }
    return typeof v === 'string' ? v.replace(/^(mcpgw-[a-z-]+)-[a-z0-9]{10}$/, '$1-HASH') : v;
  };
  return yamlObjects(text).map((o) => JSON.stringify(canon(o)));
}

const exampleSecrets = (): Obj[] => yamlObjects(readFileSync(join(root, 'deploy/k8s/secret.example.yaml'), 'utf8'));

// ---------------------------------------------------------------------------------------
// Schema validation.

/**
 * Kinds of CRDs that the manifests use, which kubernetes-models has no schema for: each
 * checked against a schema of its own, written from its CRD.
 */
const CRD_KINDS: Record<string, (o: Obj) => string[]> = {
  'gateway.networking.k8s.io/v1 HTTPRoute': httpRouteProblems,
  'monitoring.coreos.com/v1 ServiceMonitor': serviceMonitorProblems,
  'monitoring.coreos.com/v1 PrometheusRule': prometheusRuleProblems,
};

/** The kubernetes-models class of an object: `apps/v1` + `Deployment` → kubernetes-models/apps/v1 Deployment. */
function modelOf(o: Obj): { validate(): void } {
  let group: Record<string, new (data: object) => { validate(): void }>;
  try {
    group = requireFromRoot(`kubernetes-models/${o.apiVersion}`);
  } catch {
    throw new Error(`${o.kind}/${o.metadata?.name}: no kubernetes-models schema for apiVersion ${o.apiVersion}`);
  }
  const Model = group[o.kind];
  if (typeof Model !== 'function')
    throw new Error(`${o.kind}/${o.metadata?.name}: unknown kind ${o.kind} in ${o.apiVersion}`);
  return new Model(o);
}

function schemaProblems(objects: Obj[]): string[] {
  const problems: string[] = [];
  for (const o of objects) {
    const crd = CRD_KINDS[`${o.apiVersion} ${o.kind}`];
    if (crd) {
      problems.push(...crd(o).map((p) => `${o.kind}/${o.metadata?.name}: ${p}`));
      continue;
    }
    try {
      modelOf(o).validate();
    } catch (error) {
      problems.push(`${o.kind}/${o.metadata?.name}: ${(error as Error).message}`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------
// Consistency with the apps.

const OUR_LABEL = 'app.kubernetes.io/part-of';
const ENTRY = /^apps\/([a-z-]+)\/dist\/((?:[a-z-]+\/)*[a-z-]+)\.js$/;

function podSpecOf(o: Obj): any | undefined {
  if (o.kind === 'Deployment' || o.kind === 'StatefulSet' || o.kind === 'Job') return o.spec?.template?.spec;
  return undefined;
}

function ours(o: Obj): boolean {
  return o.metadata?.labels?.[OUR_LABEL] === 'mcp-agent-gateway';
}

/**
 * Every rule of the README that can be read off the rendered objects, as a list of
 * problems (empty: all good). `secrets` are the Secrets that exist when the objects are
 * applied but are not rendered (the prod ones, from secret.example.yaml).
 */
function consistencyProblems(objects: Obj[], envNames: Record<App, Set<string>>, secrets: Obj[]): string[] {
  const problems: string[] = [];
  const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);
  const secretKeys = (name: string): string[] | undefined => {
    const s = find('Secret', name) ?? secrets.find((x) => x.metadata.name === name);
    return s ? Object.keys({ ...s.data, ...s.stringData }) : undefined;
  };

  for (const o of objects.filter(ours)) {
    const pod = podSpecOf(o);
    if (!pod) continue;
    const where = `${o.kind}/${o.metadata.name}`;
    if (pod.securityContext?.runAsNonRoot !== true || pod.securityContext?.runAsUser !== 1000)
      problems.push(`${where}: must run as non-root uid 1000 (user node)`);
    if (pod.securityContext?.seccompProfile?.type !== 'RuntimeDefault')
      problems.push(`${where}: seccompProfile must be RuntimeDefault`);
    const readOnlyMounts = new Map<string, boolean>();
    for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
      const at = `${where} container ${c.name}`;
      for (const m of c.volumeMounts ?? [])
        readOnlyMounts.set(m.name, (readOnlyMounts.get(m.name) ?? true) && m.readOnly === true);
      const sc = c.securityContext ?? {};
      if (
        sc.allowPrivilegeEscalation !== false ||
        sc.readOnlyRootFilesystem !== true ||
        !sc.capabilities?.drop?.includes('ALL')
      ) {
        problems.push(
          `${at}: needs allowPrivilegeEscalation false, readOnlyRootFilesystem true, capabilities drop ALL`,
        );
      }
      if (
        !c.resources?.requests?.cpu ||
        !c.resources?.requests?.memory ||
        !c.resources?.limits?.cpu ||
        !c.resources?.limits?.memory
      ) {
        problems.push(`${at}: needs cpu and memory requests and limits`);
      }

      // The command: node apps/<app>/dist/<file>.js, whose source exists.
      const command: string[] = [...(c.command ?? []), ...(c.args ?? [])];
      const entry = command[0] === 'node' && command.length === 2 ? ENTRY.exec(command[1]) : null;
      if (!entry || !(APPS as readonly string[]).includes(entry[1])) {
        problems.push(
          `${at}: command ${JSON.stringify(command)} is not node apps/<app>/dist/<file>.js of one of ${APPS.join(', ')}`,
        );
        continue;
      }
      const app = entry[1] as App;
      if (!existsSync(join(root, 'apps', app, 'src', `${entry[2]}.ts`)))
        problems.push(`${at}: apps/${app}/src/${entry[2]}.ts does not exist (built to ${command[1]})`);

      // The environment: every variable, set directly or pulled whole from a ConfigMap or Secret.
      const env = new Map<string, string | undefined>();
      for (const from of c.envFrom ?? []) {
        if (from.prefix) problems.push(`${at}: envFrom with a prefix is not checked; do not use one`);
        if (from.configMapRef) {
          const cm = find('ConfigMap', from.configMapRef.name);
          if (!cm) problems.push(`${at}: ConfigMap ${from.configMapRef.name} is not rendered`);
          for (const [k, v] of Object.entries<string>(cm?.data ?? {})) env.set(k, v);
        }
        if (from.secretRef) {
          const keys = secretKeys(from.secretRef.name);
          if (!keys)
            problems.push(
              `${at}: Secret ${from.secretRef.name} is neither rendered nor in deploy/k8s/secret.example.yaml`,
            );
          for (const k of keys ?? []) env.set(k, undefined);
        }
      }
      for (const e of c.env ?? []) env.set(e.name, e.value);
      for (const name of env.keys()) {
        if (!envNames[app].has(name))
          problems.push(`${at}: ${name} is not a variable of ${app} (apps/${app}/src/config/${app}.env.ts)`);
      }

      // The served app: management port, probes, graceful shutdown.
      if (o.kind === 'Deployment' && entry[2] === 'main') {
        const management = (c.ports ?? []).filter((p: any) => p.name === 'management');
        const port = Number(env.get('MANAGEMENT_PORT') ?? MANAGEMENT_PORT_DEFAULT[app]);
        if (management.length !== 1 || management[0].containerPort !== port) {
          problems.push(`${at}: needs one containerPort named management equal to its MANAGEMENT_PORT (${port})`);
        }
        if (env.get('MANAGEMENT_HOST') !== '0.0.0.0')
          problems.push(`${at}: MANAGEMENT_HOST must be 0.0.0.0 so that the kubelet and Prometheus reach it`);
        const probe = (name: string, path: string, required: boolean) => {
          const p = c[name];
          if (!p) {
            if (required) problems.push(`${at}: no ${name}`);
            return;
          }
          if (p.httpGet?.port !== 'management' || p.httpGet?.path !== path)
            problems.push(`${at}: ${name} must be GET ${path} on port management`);
        };
        probe('readinessProbe', '/ready', true);
        probe('livenessProbe', '/health', true);
        probe('startupProbe', '/health', false);
        if (!c.lifecycle?.preStop) problems.push(`${at}: needs a preStop pause so that endpoints drain before SIGTERM`);
        if ((pod.terminationGracePeriodSeconds ?? 30) < 45)
          problems.push(`${at}: terminationGracePeriodSeconds must be ≥ 45 (30 s drain + preStop)`);
        const spread = pod.topologySpreadConstraints ?? [];
        if (!spread.some((t: any) => t.topologyKey === 'kubernetes.io/hostname'))
          problems.push(`${where}: needs a topologySpreadConstraint over kubernetes.io/hostname`);
      }
    }
    for (const v of pod.volumes ?? []) {
      if (v.secret && readOnlyMounts.get(v.name) !== true)
        problems.push(`${where}: Secret volume ${v.name} must be mounted read-only everywhere`);
    }
  }

  // Services: the management port is named `management` wherever it is exposed.
  for (const s of objects.filter((o) => o.kind === 'Service' && ours(o))) {
    for (const p of s.spec.ports ?? []) {
      if ([9000, 9100, 9200].includes(p.port) && p.name !== 'management')
        problems.push(`Service/${s.metadata.name}: port ${p.port} must be named management`);
    }
    if (s.spec.type && s.spec.type !== 'ClusterIP')
      problems.push(
        `Service/${s.metadata.name}: ${s.spec.type}; publish the gateway through an Ingress or route instead`,
      );
  }
  problems.push(...networkProblems(objects));
  return problems;
}

// ---------------------------------------------------------------------------------------
// Network policies: who may talk to whom, computed from the selectors.

function selects(selector: any, labels: Record<string, string>): boolean {
  if (!selector) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = e.key in labels;
    if (e.operator === 'In' && !(has && e.values.includes(labels[e.key]))) return false;
    if (e.operator === 'NotIn' && has && e.values.includes(labels[e.key])) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

/** The ports a pod with these labels may reach (egress) or be reached on from anywhere (ingress without `from`). */
function allowed(policies: Obj[], labels: Record<string, string>, direction: 'egress' | 'ingress') {
  const ports = new Set<string>();
  let fromAnywhere: string[] = [];
  for (const p of policies.filter((x) => selects(x.spec.podSelector, labels))) {
    for (const rule of p.spec[direction] ?? []) {
      const list = (rule.ports ?? [{ port: '*' }]).map((x: any) => String(x.port));
      list.forEach((x: string) => ports.add(x));
      if (direction === 'ingress' && !rule.from) fromAnywhere = fromAnywhere.concat(list);
      if (direction === 'egress' && !rule.to) ports.add('* (any destination)');
    }
  }
  return { ports, fromAnywhere };
}

function networkProblems(objects: Obj[]): string[] {
  const problems: string[] = [];
  const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
  const deny = policies.find(
    (p) => Object.keys(p.spec.podSelector ?? {}).length === 0 && !p.spec.ingress && !p.spec.egress,
  );
  if (!deny || !['Ingress', 'Egress'].every((t) => deny.spec.policyTypes?.includes(t)))
    problems.push('NetworkPolicy: no default deny of ingress and egress');
  const expectedEgress: Record<string, string[]> = {
    // 9000: the object store of files (MinIO); 3000: agent pods download attachments from the gateway.
    gateway: ['4222', '53', '5432', '9000'],
    'message-service': ['4222', '53', '5432'],
    'agent-pod': ['3000', '4222', '53'],
    migrate: ['53', '5432'],
  };
  for (const [name, expected] of Object.entries(expectedEgress)) {
    const egress = [...allowed(policies, { 'app.kubernetes.io/name': name }, 'egress').ports].sort();
    if (egress.join() !== expected.join())
      problems.push(
        `NetworkPolicy: ${name} may reach ports ${egress.join(', ') || 'none'}, expected ${expected.join(', ')}`,
      );
    const open = allowed(policies, { 'app.kubernetes.io/name': name }, 'ingress').fromAnywhere;
    const expectedOpen = name === 'gateway' ? ['http'] : [];
    if (open.join() !== expectedOpen.join())
      problems.push(
        `NetworkPolicy: ${name} is open to any source on ${open.join(', ') || 'nothing'}, expected ${expectedOpen.join(', ') || 'nothing'}`,
      );
  }
  for (const p of policies) {
    for (const rule of p.spec.ingress ?? []) {
      if (!(rule.ports ?? []).some((x: any) => x.port === 'management')) continue;
      const fromMonitoring = (rule.from ?? []).every(
        (f: any) => f.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] === 'monitoring',
      );
      if (!rule.from || !fromMonitoring)
        problems.push(
          `NetworkPolicy/${p.metadata.name}: the management port is open to more than the monitoring namespace`,
        );
    }
  }
  return problems;
}

/**
 * Least privilege (issue 22): each pod mounts only its own NATS creds Secret and no seed;
 * the gateway and the message service read their DATABASE_URL from Secrets of their own
 * (prod: roles of their own, never the superuser); the agent pods' egress goes to NATS,
 * the gateway and DNS only, whatever the ports. `auth`: the overlay runs NATS with auth.
 */
function leastPrivilegeProblems(objects: Obj[], secrets: Obj[], auth: boolean): string[] {
  const problems: string[] = [];
  const secretOf = (name: string) =>
    objects.find((o) => o.kind === 'Secret' && o.metadata.name === name) ??
    secrets.find((x) => x.metadata.name === name);
  const keysOf = (name: string) => Object.keys({ ...secretOf(name)?.data, ...secretOf(name)?.stringData });
  const SEED = /seed|system\.creds|^NATS_(OPERATOR_SEED_FILE|ACCOUNT_SIGNING_SEED_FILE|SYSTEM_CREDS)$/i;
  const databaseSecret: Record<string, Set<string>> = {};
  for (const o of objects.filter(ours)) {
    const pod = podSpecOf(o);
    if (!pod) continue;
    const where = `${o.kind}/${o.metadata.name}`;
    const name = o.spec.template.metadata?.labels?.['app.kubernetes.io/name'] ?? o.metadata.name;
    const containers = [...(pod.initContainers ?? []), ...pod.containers];
    const agentId = (() => {
      for (const c of containers)
        for (const f of c.envFrom ?? []) {
          const cm =
            f.configMapRef && objects.find((x) => x.kind === 'ConfigMap' && x.metadata.name === f.configMapRef.name);
          if (cm?.data?.AGENT_ID) return cm.data.AGENT_ID as string;
        }
      return undefined;
    })();
    const own = name === 'agent-pod' ? `mcpgw-nats-agent-${agentId}` : `mcpgw-nats-${name}`;
    const natsSecrets = (pod.volumes ?? [])
      .filter((v: any) => v.secret?.secretName?.startsWith('mcpgw-nats-'))
      .map((v: any) => v.secret.secretName as string);
    const expected = auth && ['gateway', 'message-service', 'agent-pod'].includes(name) ? [own] : [];
    if (natsSecrets.join() !== expected.join())
      problems.push(
        `${where}: mounts NATS creds ${natsSecrets.join(', ') || 'none'}, expected ${expected.join(', ') || 'none'}`,
      );
    const referenced = [
      ...(pod.volumes ?? []).filter((v: any) => v.secret).map((v: any) => v.secret.secretName as string),
      ...containers.flatMap((c) =>
        (c.envFrom ?? []).filter((f: any) => f.secretRef).map((f: any) => f.secretRef.name as string),
      ),
    ];
    for (const secret of referenced)
      for (const key of keysOf(secret)) if (SEED.test(key)) problems.push(`${where}: Secret ${secret} holds ${key}`);
    for (const c of containers) {
      for (const e of c.env ?? []) if (SEED.test(e.name)) problems.push(`${where}: ${e.name} on ${c.name}`);
      for (const f of c.envFrom ?? []) {
        const cm =
          f.configMapRef && objects.find((x) => x.kind === 'ConfigMap' && x.metadata.name === f.configMapRef.name);
        for (const key of Object.keys(cm?.data ?? {}))
          if (SEED.test(key)) problems.push(`${where}: ${key} in ${cm.metadata.name}`);
        if (f.secretRef && keysOf(f.secretRef.name).includes('DATABASE_URL'))
          (databaseSecret[`${name}/${c.command?.[1] ?? c.name}`] ??= new Set()).add(f.secretRef.name);
      }
    }
  }
  // The database: one Secret (so one role) per service, the migrations of a service with its own.
  const byService = (service: string) =>
    new Set(
      Object.entries(databaseSecret)
        .filter(([k]) => k.includes(`apps/${service}/`) || k.startsWith(`${service}/`))
        .flatMap(([, v]) => [...v]),
    );
  const gatewayDb = byService('gateway');
  const messagingDb = byService('message-service');
  if (gatewayDb.size !== 1 || messagingDb.size !== 1 || [...gatewayDb][0] === [...messagingDb][0])
    problems.push(
      `DATABASE_URL: the gateway (${[...gatewayDb].join(', ')}) and the message service (${[...messagingDb].join(', ')}) need one Secret each, not shared`,
    );
  if (byService('agent-pod').size) problems.push('agent-pod: reads a DATABASE_URL');
  if (auth) {
    const users = [...gatewayDb, ...messagingDb].map((n) => {
      const url = (secretOf(n)?.stringData ?? {}).DATABASE_URL as string | undefined;
      return url ? decodeURIComponent(new URL(url).username) : '';
    });
    if (users.some((u) => !u || u === 'postgres') || users[0] === users[1])
      problems.push(`DATABASE_URL: roles ${users.join(', ')}: one per service, never the superuser`);
  }
  // Agent pods: NATS, the gateway and DNS, nothing else.
  const agentLabels = { 'app.kubernetes.io/name': 'agent-pod' };
  for (const p of objects.filter((o) => o.kind === 'NetworkPolicy' && selects(o.spec.podSelector, agentLabels))) {
    for (const rule of p.spec.egress ?? []) {
      for (const peer of rule.to ?? [{}]) {
        const target =
          peer.podSelector?.matchLabels?.['app.kubernetes.io/name'] ?? peer.podSelector?.matchLabels?.['k8s-app'];
        if (!['nats', 'gateway', 'kube-dns'].includes(target) || peer.ipBlock)
          problems.push(`NetworkPolicy/${p.metadata.name}: agent pods may reach ${JSON.stringify(peer)}`);
      }
    }
  }
  return problems;
}

/** Prod only: two replicas or more of everything (directly or through an autoscaler), each under a disruption budget. */
function availabilityProblems(objects: Obj[]): string[] {
  const problems: string[] = [];
  for (const d of objects.filter((o) => o.kind === 'Deployment' && ours(o))) {
    const hpa = objects.find(
      (o) =>
        o.kind === 'HorizontalPodAutoscaler' &&
        o.spec.scaleTargetRef.kind === 'Deployment' &&
        o.spec.scaleTargetRef.name === d.metadata.name,
    );
    const min = hpa ? hpa.spec.minReplicas : d.spec.replicas;
    if (!(min >= 2)) problems.push(`Deployment/${d.metadata.name}: fewer than 2 replicas (${min ?? 'default 1'})`);
    if (hpa && d.spec.replicas !== undefined)
      problems.push(`Deployment/${d.metadata.name}: sets replicas although an autoscaler owns them`);
    const labels = d.spec.template.metadata.labels;
    if (!objects.some((o) => o.kind === 'PodDisruptionBudget' && selects(o.spec.selector, labels)))
      problems.push(`Deployment/${d.metadata.name}: no PodDisruptionBudget`);
  }
  for (const name of ['gateway', 'agent-pod']) {
    const targets = objects
      .filter((o) => o.kind === 'Deployment' && o.metadata.labels?.['app.kubernetes.io/name'] === name)
      .map((o) => o.metadata.name);
    const scaled = objects.some(
      (o) =>
        o.kind === 'HorizontalPodAutoscaler' &&
        targets.includes(o.spec.scaleTargetRef.name) &&
        o.spec.metrics?.some((m: any) => m.resource?.name === 'cpu'),
    );
    if (!scaled) problems.push(`${name}: no CPU HorizontalPodAutoscaler`);
  }
  return problems;
}

/**
 * Prod only: Prometheus (Operator) scrapes every app. Each ServiceMonitor endpoint names a
 * port that every Service it selects (ours, in its namespace) has, and selects one at
 * least; each of our Services with a management port is scraped on it by a ServiceMonitor;
 * the rule file is rendered as a PrometheusRule.
 */
function scrapeProblems(objects: Obj[]): string[] {
  const problems: string[] = [];
  const services = objects.filter((o) => o.kind === 'Service' && ours(o));
  const monitors = objects.filter((o) => o.kind === 'ServiceMonitor') as unknown as (Obj & ServiceMonitor)[];
  const selected = (m: ServiceMonitor) =>
    services.filter(
      (s) =>
        selects(m.spec.selector, s.metadata.labels ?? {}) &&
        (m.spec.namespaceSelector?.any ||
          (m.spec.namespaceSelector?.matchNames ?? [m.metadata.namespace]).includes(s.metadata.namespace)),
    );
  const scraped = new Set<string>();
  for (const m of monitors) {
    const where = `ServiceMonitor/${m.metadata.name}`;
    const targets = selected(m);
    if (!targets.length) problems.push(`${where}: selects no Service of ours`);
    for (const e of m.spec.endpoints ?? []) {
      for (const s of targets) {
        if (!(s.spec.ports ?? []).some((p: any) => p.name === e.port))
          problems.push(`${where}: Service/${s.metadata.name} has no port named ${e.port}`);
        else scraped.add(`${s.metadata.name}:${e.port}`);
      }
    }
  }
  for (const s of services)
    if ((s.spec.ports ?? []).some((p: any) => p.name === 'management') && !scraped.has(`${s.metadata.name}:management`))
      problems.push(`Service/${s.metadata.name}: no ServiceMonitor scrapes its management port`);
  if (!objects.some((o) => o.kind === 'PrometheusRule')) problems.push('no PrometheusRule: the alerts are not loaded');
  return problems;
}

// ---------------------------------------------------------------------------------------

const kubectl = kubectlStatus();
const skipRender = !kubectl.ok && kubectl.absent && process.env.CI !== 'true';
if (skipRender)
  console.warn(
    `k8s-manifests: SKIPPED rendering deploy/k8s (outside CI only): ${(kubectl as { reason: string }).reason}`,
  );

let envNames: Record<App, Set<string>>;
/** The gateway's settings with nothing set: its env class's defaults. */
let gatewayDefaults: object;
beforeAll(async () => {
  envNames = Object.fromEntries(await Promise.all(APPS.map(async (app) => [app, await envNamesOf(app)]))) as Record<
    App,
    Set<string>
  >;
  const gateway = (await import(resolve(root, 'apps/gateway/src/config/gateway.env.ts'))) as {
    loadEnv: (env: object) => object;
  };
  gatewayDefaults = gateway.loadEnv({});
});

describe('the env classes the manifests are checked against', () => {
  it('are read from the apps (so a renamed variable fails the manifests)', () => {
    expect(envNames.gateway).toContain('GATEWAY_PORT');
    expect(envNames.gateway).toContain('DATABASE_URL');
    expect(envNames['message-service']).toContain('MESSAGE_SERVICE_PORT');
    expect(envNames['agent-pod']).toContain('AGENT_ID');
    expect(envNames['agent-pod']).not.toContain('DATABASE_URL');
  });
});

describe.skipIf(skipRender)('Kubernetes manifests (deploy/k8s)', () => {
  const rendered: Partial<Record<(typeof OVERLAYS)[number], Obj[]>> = {};
  const get = (overlay: (typeof OVERLAYS)[number]): Obj[] => {
    if (!kubectl.ok) throw new Error(kubectl.reason);
    return (rendered[overlay] ??= render(`overlays/${overlay}`));
  };

  it('have a kubectl recent enough to render them', () => {
    if (!kubectl.ok) throw new Error(kubectl.reason);
  });

  it('tolerate on stderr only the known deprecation warnings of kustomize v5', () => {
    const known = (field: string, use: string) =>
      `# Warning: '${field}' is deprecated. Please use '${use}' instead. Run 'kustomize edit fix' to update your Kustomization automatically.`;
    expect(
      unexpectedWarnings(`${known('bases', 'resources')}\n${known('patchesStrategicMerge', 'patches')}\n`),
    ).toEqual([]);
    expect(unexpectedWarnings(`${known('commonLabels', 'labels')}\nError: accumulating resources\n`)).toEqual([
      known('commonLabels', 'labels'),
      'Error: accumulating resources',
    ]);
  });

  // KUBECTL_COMPARE=<another kubectl>: both render the same objects (up to the generated
  // names' hash), e.g. kubectl 1.32 (kustomize v5.5) against Debian's 1.20 (v2.0.3).
  it
    .skipIf(!process.env.KUBECTL_COMPARE)
    .each([...OVERLAYS.map((o) => `overlays/${o}`), ...EDGE_EXAMPLES.map((e) => `examples/${e}`)])(
    '%s renders the same objects with KUBECTL_COMPARE',
    (dir) => {
      const ours = comparable(renderText(dir));
      const theirs = comparable(renderText(dir, process.env.KUBECTL_COMPARE));
      expect(theirs.sort()).toEqual(ours.sort());
      expect(ours.length).toBeGreaterThan(20);
    },
  );

  describe.each(OVERLAYS)('overlay %s', (overlay) => {
    it('renders with kubectl kustomize', () => {
      const kinds = new Set(get(overlay).map((o) => o.kind));
      for (const kind of ['Deployment', 'Service', 'ConfigMap', 'Job', 'NetworkPolicy']) expect(kinds).toContain(kind);
    });

    it('validates against the Kubernetes OpenAPI schemas', () => {
      expect(schemaProblems(get(overlay))).toEqual([]);
    });

    it('agrees with the apps: entry files, env variables, management port, probes, security, network', () => {
      expect(consistencyProblems(get(overlay), envNames, exampleSecrets())).toEqual([]);
    });

    it('least privilege: own NATS creds only, no seed, a database Secret per service, agent pods to NATS and the gateway only', () => {
      expect(leastPrivilegeProblems(get(overlay), exampleSecrets(), overlay === 'prod')).toEqual([]);
    });
  });

  describe('publishing the gateway (deploy/k8s/examples/ingress-nginx, gateway-api)', () => {
    const examples: Partial<Record<(typeof EDGE_EXAMPLES)[number], Obj[]>> = {};
    const example = (name: (typeof EDGE_EXAMPLES)[number]): Obj[] => {
      if (!kubectl.ok) throw new Error(kubectl.reason);
      return (examples[name] ??= render(`examples/${name}`));
    };
    const routes = gatewayRoutes(root);
    /** The gateway's limits as the rendered ConfigMaps set them, else its env class's defaults. */
    const settingsOf = (objects: Obj[]): EdgeSettings => {
      const data: Record<string, string> = Object.assign(
        {},
        ...objects
          .filter((o) => o.kind === 'ConfigMap' && /^mcpgw-(common|gateway)-/.test(o.metadata.name))
          .map((o) => o.data),
      );
      const defaults = gatewayDefaults as Record<string, unknown>;
      const value = (name: string) => data[name] ?? String(defaults[name] ?? '');
      return {
        CALL_TIMEOUT_MAX_MS: Number(value('CALL_TIMEOUT_MAX_MS')),
        MCP_MAX_BODY_BYTES: Number(value('MCP_MAX_BODY_BYTES')),
        FILES_MAX_BYTES: Number(value('FILES_MAX_BYTES')),
        FILES_UPLOAD_TIMEOUT_MS: Number(value('FILES_UPLOAD_TIMEOUT_MS')),
        publicUrls: [value('FILES_PUBLIC_BASE_URL'), value('PUBLIC_BASE_URL')].filter(Boolean),
      };
    };
    const added = (name: (typeof EDGE_EXAMPLES)[number]) => {
      const prod = new Set(get('prod').map((o) => `${o.kind}/${o.metadata.name}`));
      return example(name).filter((o) => !prod.has(`${o.kind}/${o.metadata.name}`));
    };

    it('reads what the gateway serves from its sources: controllers and the signed file URLs', () => {
      const listed = routes.map((r) => `${r.method} ${r.path}`);
      expect(listed).toEqual(
        expect.arrayContaining([
          'POST /:agentId/mcp',
          'GET /:agentId/mcp',
          'DELETE /:agentId/mcp',
          'POST /workspaces/:workspaceId/agents/:agentId/mcp/http',
          'POST /api/v1/files/presign-upload',
          'PUT /api/v1/files/:id/content',
          'GET /api/v1/files/:id/content',
          'GET /.well-known/oauth-protected-resource/:agentId/mcp',
          'POST /api/v1/agents/:agentId/webhooks',
        ]),
      );
    });

    it.each(EDGE_EXAMPLES)('%s: the prod overlay plus its routing objects only, in namespace mcpgw', (name) => {
      const extra = added(name);
      expect(extra.map((o) => o.kind).sort()).toEqual(
        name === 'ingress-nginx' ? ['Ingress', 'Ingress'] : ['HTTPRoute'],
      );
      for (const o of extra) expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe('mcpgw');
      expect(example(name).length).toBe(get('prod').length + extra.length);
    });

    it.each(EDGE_EXAMPLES)(
      "%s: validates (Ingress: the Kubernetes schemas; HTTPRoute: its CRD's, written out)",
      (name) => {
        expect(schemaProblems(example(name))).toEqual([]);
      },
    );

    it.each(EDGE_EXAMPLES)(
      '%s: routes every gateway route to gateway:http on the public host, unbuffered, with timeouts above the longest call and the body sizes of the gateway',
      (name) => {
        expect(edgeProblems(example(name), routes, settingsOf(example(name)))).toEqual([]);
      },
    );

    describe('negative controls: broken copies of the examples', () => {
      const broken = (name: (typeof EDGE_EXAMPLES)[number], change: (objects: Obj[]) => void) => {
        const objects = structuredClone(example(name));
        change(objects);
        return [...schemaProblems(objects), ...edgeProblems(objects, routes, settingsOf(objects))];
      };
      const ingress = (o: Obj[], name: string) => o.find((x) => x.kind === 'Ingress' && x.metadata.name === name)!;
      const route = (o: Obj[]) => o.find((x) => x.kind === 'HTTPRoute')!;
      const NGINX = 'nginx.ingress.kubernetes.io/';

      it('the unbroken copies pass', () => {
        expect(broken('ingress-nginx', () => undefined)).toEqual([]);
        expect(broken('gateway-api', () => undefined)).toEqual([]);
      });

      it('Ingress: buffered responses, a read timeout not above CALL_TIMEOUT_MAX_MS, another body size fail', () => {
        const problems = broken('ingress-nginx', (o) => {
          delete ingress(o, 'gateway').metadata.annotations[`${NGINX}proxy-buffering`];
          ingress(o, 'gateway').metadata.annotations[`${NGINX}proxy-read-timeout`] = '600';
          ingress(o, 'gateway').metadata.annotations[`${NGINX}proxy-body-size`] = '8m';
        });
        expect(problems).toContainEqual(
          expect.stringContaining('POST /:agentId/mcp (Ingress/gateway): proxy-buffering must be "off"'),
        );
        expect(problems).toContainEqual(
          expect.stringContaining('proxy-read-timeout 600 s, not above CALL_TIMEOUT_MAX_MS (600 s)'),
        );
        expect(problems).toContainEqual(
          expect.stringContaining('proxy-body-size 8m is not MCP_MAX_BODY_BYTES (1048576)'),
        );
      });

      it('Ingress: uploads through the MCP settings (no files Ingress), a setting the ConfigMap changes, another host fail', () => {
        const withoutFiles = broken('ingress-nginx', (o) => o.splice(o.indexOf(ingress(o, 'gateway-files')), 1));
        expect(withoutFiles).toContainEqual(
          expect.stringContaining(
            'PUT /api/v1/files/:id/content (Ingress/gateway): proxy-body-size 1m is not FILES_MAX_BYTES (104857600)',
          ),
        );
        expect(withoutFiles).toContainEqual(expect.stringContaining('proxy-request-buffering must be "off"'));
        const longerCalls = broken('ingress-nginx', (o) => {
          o.find(
            (x) => x.kind === 'ConfigMap' && x.metadata.name.startsWith('mcpgw-gateway-'),
          )!.data.CALL_TIMEOUT_MAX_MS = '900000';
        });
        expect(longerCalls).toContainEqual(expect.stringContaining('not above CALL_TIMEOUT_MAX_MS (900 s)'));
        const otherHost = broken(
          'ingress-nginx',
          (o) => (ingress(o, 'gateway').spec.rules[0].host = 'mcp.example.org'),
        );
        expect(otherHost).toContainEqual(
          expect.stringContaining('host mcp.example.org is not the public one (mcp.example.com)'),
        );
        expect(otherHost).toContainEqual(
          expect.stringContaining('POST /:agentId/mcp: no Ingress path of mcp.example.com routes it'),
        );
      });

      it('HTTPRoute: a finite timeout on the GET stream, one not above CALL_TIMEOUT_MAX_MS, none at all fail', () => {
        const oneRule = broken('gateway-api', (o) => route(o).spec.rules.shift());
        expect(oneRule).toContainEqual(
          expect.stringContaining(
            "GET /:agentId/mcp (HTTPRoute/gateway): timeouts.request 660s would cut the session's stream",
          ),
        );
        const short = broken('gateway-api', (o) => (route(o).spec.rules[1].timeouts = { request: '10m' }));
        expect(short).toContainEqual(
          expect.stringContaining(
            'POST /:agentId/mcp (HTTPRoute/gateway): timeouts.request 10m is not above CALL_TIMEOUT_MAX_MS (600 s)',
          ),
        );
        const none = broken('gateway-api', (o) => delete route(o).spec.rules[1].timeouts);
        expect(none).toContainEqual(
          expect.stringContaining('POST /:agentId/mcp (HTTPRoute/gateway): no timeouts.request'),
        );
      });

      it("HTTPRoute: a misspelt field, a bad duration, backendRequest over request, another backend fail the CRD's schema and rules", () => {
        const problems = broken('gateway-api', (o) => {
          const [get, rest] = route(o).spec.rules;
          get.timeout = get.timeouts;
          rest.timeouts.request = '11 minutes';
          rest.backendRefs[0].port = 9000;
        });
        expect(problems).toContainEqual(expect.stringContaining('must NOT have additional properties (timeout)'));
        expect(problems).toContainEqual(expect.stringContaining('/spec/rules/1/timeouts/request must match pattern'));
        const longer = broken('gateway-api', (o) => (route(o).spec.rules[1].timeouts.backendRequest = '20m'));
        expect(longer).toContainEqual(
          expect.stringContaining('backendRequest timeout cannot be longer than request timeout'),
        );
        const elsewhere = broken('gateway-api', (o) => (route(o).spec.rules[1].backendRefs[0].port = 9000));
        expect(elsewhere).toContainEqual(
          expect.stringContaining('a rule goes to Service gateway:9000, not Service gateway:3000'),
        );
      });
    });
  });

  it('the bridge example (deploy/k8s/examples/bridge) validates, and runs the bridge with its stdio server in one container', () => {
    const dir = join(root, 'deploy/k8s/examples/bridge');
    const objects = yamlObjects(readFileSync(join(dir, 'deployment.yaml'), 'utf8'));
    expect(schemaProblems(objects)).toEqual([]);
    const [deployment] = objects;
    expect(deployment.kind).toBe('Deployment');
    const [container, ...others] = deployment.spec.template.spec.containers;
    expect(others).toEqual([]);
    expect(container.args.slice(0, 3)).toEqual(['--agent', 'everything', '--']);
    expect(container.env.map((e: { name: string }) => e.name)).toEqual(
      expect.arrayContaining(['NATS_URL', 'NATS_CREDS']),
    );
    const dockerfile = readFileSync(join(dir, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain('ENTRYPOINT ["node_modules/.bin/mcpgw-bridge"]');
    expect(dockerfile).toContain('@modelcontextprotocol/server-everything@');
  });

  it("prod: ServiceMonitors scrape each app's management port through its Service; the PrometheusRule is rendered", () => {
    const objects = get('prod');
    expect(
      objects
        .filter((o) => o.kind === 'ServiceMonitor')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['agent-pod', 'gateway', 'message-service']);
    expect(scrapeProblems(objects)).toEqual([]);
  });

  it('prod: two replicas or more, disruption budgets, CPU autoscaling of the gateway and agent pods', () => {
    expect(availabilityProblems(get('prod'))).toEqual([]);
  });

  it('prod: commits no Secret; every Secret it references is in secret.example.yaml with placeholders only', () => {
    const objects = get('prod');
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    const referenced = new Set<string>();
    for (const o of objects) {
      const pod = podSpecOf(o);
      for (const c of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])])
        for (const f of c.envFrom ?? []) if (f.secretRef) referenced.add(f.secretRef.name);
      for (const v of pod?.volumes ?? []) if (v.secret) referenced.add(v.secret.secretName);
    }
    const examples = exampleSecrets();
    expect([...referenced].filter((name) => !examples.some((s) => s.metadata.name === name))).toEqual([]);
    for (const s of examples) {
      expect(s.data, `${s.metadata.name}: use stringData placeholders`).toBeUndefined();
      for (const [k, v] of Object.entries<string>(s.stringData))
        expect(v, `${s.metadata.name}.${k}`).toContain('REPLACE_ME');
    }
    expect(schemaProblems(examples)).toEqual([]);
  });

  describe('negative controls: the same checks on broken copies of the rendered prod objects', () => {
    const broken = (change: (objects: Obj[]) => void): string[] => {
      const objects = structuredClone(get('prod'));
      change(objects);
      return [
        ...consistencyProblems(objects, envNames, exampleSecrets()),
        ...schemaProblems(objects),
        ...availabilityProblems(objects),
        ...scrapeProblems(objects),
      ];
    };
    const monitor = (objects: Obj[], name: string) =>
      objects.find((o) => o.kind === 'ServiceMonitor' && o.metadata.name === name)!;
    const gateway = (objects: Obj[]) =>
      objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'gateway')!.spec.template.spec.containers[0];
    const gatewayConfig = (objects: Obj[]) =>
      objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('mcpgw-gateway-'))!;

    it('the unbroken copy passes', () => {
      expect(broken(() => undefined)).toEqual([]);
    });

    it('a misspelled variable on a container fails', () => {
      expect(broken((o) => (gateway(o).env[0].name = 'SERVICE_INSTANSE'))).toEqual([
        expect.stringContaining('SERVICE_INSTANSE is not a variable of gateway'),
      ]);
    });

    it('a variable of another app in a ConfigMap fails', () => {
      expect(broken((o) => (gatewayConfig(o).data.AGENT_ID = 'demo-agent'))).toContainEqual(
        expect.stringContaining('AGENT_ID is not a variable of gateway'),
      );
    });

    it('a management port that differs from MANAGEMENT_PORT fails', () => {
      expect(broken((o) => (gatewayConfig(o).data.MANAGEMENT_PORT = '9001'))).toContainEqual(
        expect.stringContaining('equal to its MANAGEMENT_PORT (9001)'),
      );
    });

    it('a probe on the public port or another path fails', () => {
      const problems = broken((o) => {
        gateway(o).readinessProbe.httpGet.port = 'http';
        gateway(o).livenessProbe.httpGet.path = '/healthz';
      });
      expect(problems).toContainEqual(expect.stringContaining('readinessProbe must be GET /ready on port management'));
      expect(problems).toContainEqual(expect.stringContaining('livenessProbe must be GET /health on port management'));
    });

    it('an entry file that does not exist fails', () => {
      expect(broken((o) => (gateway(o).command = ['node', 'apps/gateway/dist/server.js']))).toContainEqual(
        expect.stringContaining('apps/gateway/src/server.ts does not exist'),
      );
    });

    it('a schema violation and an unknown kind fail', () => {
      const problems = broken((o) => {
        gateway(o).ports[0].containerPort = '3000';
        o.push({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } });
      });
      expect(problems).toContainEqual(expect.stringContaining('containerPort must be integer'));
      expect(problems).toContainEqual(expect.stringContaining('Widget/w: no kubernetes-models schema'));
    });

    it('a writable root filesystem, an open management port and a wider egress fail', () => {
      const problems = broken((o) => {
        gateway(o).securityContext.readOnlyRootFilesystem = false;
        const monitoring = o.find((x) => x.metadata.name === 'allow-ingress-management-from-monitoring')!;
        delete monitoring.spec.ingress[0].from;
        const postgresql = o.find((x) => x.metadata.name === 'allow-egress-postgresql')!;
        postgresql.spec.podSelector.matchExpressions[0].values.push('agent-pod');
      });
      expect(problems).toContainEqual(expect.stringContaining('readOnlyRootFilesystem true'));
      expect(problems).toContainEqual(
        expect.stringContaining('management port is open to more than the monitoring namespace'),
      );
      expect(problems).toContainEqual(expect.stringContaining('agent-pod may reach ports 3000, 4222, 53, 5432'));
    });

    it("another app's NATS creds, a seed, a shared database Secret, an agent pod's way to PostgreSQL fail", () => {
      const objects = structuredClone(get('prod'));
      const agent = objects.find((x) => x.kind === 'Deployment' && x.metadata.name === 'agent-pod-demo-agent')!;
      agent.spec.template.spec.volumes.push({ name: 'stolen', secret: { secretName: 'mcpgw-nats-gateway' } });
      const ms = objects.find((x) => x.kind === 'Deployment' && x.metadata.name === 'message-service')!;
      ms.spec.template.spec.containers[0].envFrom.push({ secretRef: { name: 'mcpgw-gateway' } });
      gateway(objects).env.push({ name: 'NATS_OPERATOR_SEED_FILE', value: '/seeds/operator.seed' });
      objects
        .find((x) => x.metadata.name === 'allow-egress-nats')!
        .spec.egress[0].to.push({
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'postgresql' } },
          podSelector: { matchLabels: { 'app.kubernetes.io/name': 'postgresql' } },
        });
      const problems = leastPrivilegeProblems(objects, exampleSecrets(), true);
      expect(problems).toEqual(
        expect.arrayContaining([
          expect.stringContaining(
            'Deployment/agent-pod-demo-agent: mounts NATS creds mcpgw-nats-agent-demo-agent, mcpgw-nats-gateway,',
          ),
          expect.stringContaining('Deployment/gateway: NATS_OPERATOR_SEED_FILE'),
          expect.stringContaining('need one Secret each'),
          expect.stringContaining('NetworkPolicy/allow-egress-nats: agent pods may reach'),
        ]),
      );
    });

    it('a ServiceMonitor on a port the Service lacks, one selecting no Service, an app left unscraped fail', () => {
      const problems = broken((o) => {
        monitor(o, 'gateway').spec.endpoints[0].port = 'metrics';
        monitor(o, 'message-service').spec.selector.matchLabels['app.kubernetes.io/name'] = 'messages';
        o.splice(o.indexOf(monitor(o, 'agent-pod')), 1);
      });
      expect(problems).toEqual(
        expect.arrayContaining([
          'ServiceMonitor/gateway: Service/gateway has no port named metrics',
          'ServiceMonitor/message-service: selects no Service of ours',
          'Service/gateway: no ServiceMonitor scrapes its management port',
          'Service/message-service: no ServiceMonitor scrapes its management port',
          'Service/agent-pod-demo-agent: no ServiceMonitor scrapes its management port',
        ]),
      );
    });

    it("a misspelt field, a bad interval, a timeout above it, a rule both alert and record fail the CRDs' schemas and rules", () => {
      const problems = broken((o) => {
        monitor(o, 'gateway').spec.endpoints[0].targetport = 'management';
        monitor(o, 'message-service').spec.endpoints[0].interval = '30 seconds';
        monitor(o, 'agent-pod').spec.endpoints[0].scrapeTimeout = '1m';
        const rule = o.find((x) => x.kind === 'PrometheusRule')!;
        rule.spec.groups[0].rules[0].alert = 'Both';
      });
      expect(problems).toContainEqual(
        expect.stringContaining(
          'ServiceMonitor/gateway: /spec/endpoints/0 must NOT have additional properties (targetport)',
        ),
      );
      expect(problems).toContainEqual(
        expect.stringContaining('ServiceMonitor/message-service: /spec/endpoints/0/interval must match pattern'),
      );
      expect(problems).toContainEqual(
        'ServiceMonitor/agent-pod: /spec/endpoints/0: scrapeTimeout 1m is greater than the interval 30s',
      );
      expect(problems).toContainEqual(
        'PrometheusRule/mcpgw: /spec/groups/0/rules/0: needs exactly one of record and alert',
      );
    });

    it('no PrometheusRule fails', () => {
      expect(
        broken((o) =>
          o.splice(
            o.findIndex((x) => x.kind === 'PrometheusRule'),
            1,
          ),
        ),
      ).toEqual(['no PrometheusRule: the alerts are not loaded']);
    });

    it('a single replica without an autoscaler fails in prod', () => {
      expect(
        broken(
          (o) => (o.find((x) => x.kind === 'Deployment' && x.metadata.name === 'message-service')!.spec.replicas = 1),
        ),
      ).toContainEqual(expect.stringContaining('message-service: fewer than 2 replicas'));
    });
  });
});

// ---------------------------------------------------------------------------------------
// docker-compose.yml: the same port contract.

describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
    services: Record<string, any>;
  };

  it('publishes only the gateway public port (and the observability profile’s on loopback); healthchecks use each app’s management port; env names are the apps’', () => {
    const problems: string[] = [];
    for (const [name, service] of Object.entries(compose.services)) {
      const app = (APPS as readonly string[]).includes(name) ? (name as App) : undefined;
      const loopbackOnly = (service.ports ?? []).every((p: unknown) => String(p).startsWith('127.0.0.1:'));
      const observability = service.profiles?.includes('observability') && loopbackOnly;
      if (service.ports && name !== 'gateway' && !observability)
        problems.push(`${name}: publishes ${service.ports.join(', ')}`);
      if (!app) continue;
      const env: Record<string, string> = service.environment ?? {};
      for (const key of Object.keys(env))
        if (!envNames[app].has(key)) problems.push(`${name}: ${key} is not a variable of ${app}`);
      const management = Number(env.MANAGEMENT_PORT ?? MANAGEMENT_PORT_DEFAULT[app]);
      const check = JSON.stringify(service.healthcheck?.test ?? []);
      if (!check.includes(`http://127.0.0.1:${management}/ready`))
        problems.push(`${name}: healthcheck must GET /ready on its management port ${management}`);
      if (
        app === 'gateway' &&
        JSON.stringify(service.ports) !== JSON.stringify([`${env.GATEWAY_PORT}:${env.GATEWAY_PORT}`])
      ) {
        problems.push(`gateway: must publish exactly GATEWAY_PORT (${env.GATEWAY_PORT})`);
      }
    }
    expect(problems).toEqual([]);
  });

  const dockerCompose = spawnSync('docker-compose', ['version'], { encoding: 'utf8' });
  // Skipped on a workstation without docker-compose; CI (.ci/run installs it) always runs it.
  it.skipIf(Boolean(dockerCompose.error) && !process.env.CI)(
    'passes docker-compose config -q with .env.example',
    () => {
      const args = ['-f', join(root, 'docker-compose.yml'), '--env-file', join(root, '.env.example'), 'config', '-q'];
      const run = spawnSync('docker-compose', args, {
        cwd: root,
        encoding: 'utf8',
      });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
    },
  );
});

/**
 * The stack's files (docker-compose.yml, collector/otel-collector.yaml, collector/prometheus.yml,
 * stack/jaeger-backend.yaml) are checked against each other: the wiring mistakes that make a stack
 * come up "fine" and show no traces are all cross-file mismatches. Docker is not available here,
 * so the compose side is checked only this way; the loopback side (`npm run stack`) also runs for
 * real in test/stack-e2e.
 *
 * Each check is a small function from parsed YAML to a list of problems, so every check is also
 * run on a deliberately broken copy to prove it can fail.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string): string => readFileSync(root + file, 'utf8');

const ENV_REF = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * The collector's own `${env:NAME:-default}` expansion: a variable set in `env` wins, else the
 * default. Docker users set nothing, so they get the defaults; the stack script sets loopback
 * addresses. YAML is parsed after expansion, as the collector does for whole-value references.
 */
function expandEnv(text: string, env: Record<string, string> = {}): string {
  return text.replace(ENV_REF, (_m, name: string, fallback: string | undefined) => env[name] ?? fallback ?? '');
}

/** References without a default would leave a compose user with an empty address. */
function envDefaultProblems(file: string, text: string): string[] {
  return [...text.matchAll(ENV_REF)].filter((m) => m[2] === undefined || m[2] === '').map((m) => `${file}: \${env:${m[1]}} has no default (write \${env:${m[1]}:-value})`);
}

const load = (file: string, env: Record<string, string> = {}): unknown => parse(expandEnv(read(file), env));

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const obj = (x: unknown): Obj => (isObj(x) ? x : {});
const list = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);
const names = (x: unknown): string[] => list(x).map(String);

/** Well-known ports: OTLP as the SDKs default to them, and Jaeger's built-in OTLP gRPC receiver. */
const OTLP_GRPC = 4317;
const OTLP_HTTP = 4318;
const JAEGER_SERVICE = 'jaeger';
const COLLECTOR_SERVICE = 'otel-collector';

/** "0.0.0.0:4317", "jaeger:4317", "http://jaeger:4317", "[::]:4317" -> host and port. */
function hostPort(endpoint: unknown): { host: string; port: number } | null {
  if (typeof endpoint !== 'string') return null;
  const bare = endpoint.replace(/^[a-z]+:\/\//i, '').replace(/\/.*$/, '');
  const m = /^(\[[^\]]*\]|[^:]*):(\d+)$/.exec(bare);
  if (!m) return null;
  return { host: m[1]!, port: Number(m[2]) };
}

/** The component type: `otlp/jaeger` is an `otlp` exporter named jaeger. */
const typeOf = (id: string) => id.split('/')[0]!;

// ---------------------------------------------------------------------------------------------
// collector checks

/** Every component a pipeline names is defined; every defined component is used. */
function pipelineProblems(collector: unknown): string[] {
  const c = obj(collector);
  const problems: string[] = [];
  const receivers = obj(c['receivers']);
  const processors = obj(c['processors']);
  const exporters = obj(c['exporters']);
  const connectors = obj(c['connectors']);
  const pipelines = obj(obj(c['service'])['pipelines']);
  if (Object.keys(pipelines).length === 0) problems.push('service.pipelines defines no pipeline');
  const used = new Set<string>();
  for (const [name, raw] of Object.entries(pipelines)) {
    if (!/^(traces|metrics|logs)(\/.+)?$/.test(name)) {
      problems.push(`pipeline "${name}": the name must be traces, metrics or logs (optionally /suffix)`);
    }
    const p = obj(raw);
    const rs = names(p['receivers']);
    const ps = names(p['processors']);
    const es = names(p['exporters']);
    if (rs.length === 0) problems.push(`pipeline "${name}" has no receivers`);
    if (es.length === 0) problems.push(`pipeline "${name}" has no exporters`);
    for (const r of rs) {
      used.add(`receivers.${r}`);
      if (r in connectors) used.add(`connectors.${r}`);
      else if (!(r in receivers)) problems.push(`pipeline "${name}": receiver "${r}" is not defined under receivers or connectors`);
    }
    for (const x of ps) {
      used.add(`processors.${x}`);
      if (!(x in processors)) problems.push(`pipeline "${name}": processor "${x}" is not defined under processors`);
    }
    for (const e of es) {
      used.add(`exporters.${e}`);
      if (e in connectors) used.add(`connectors.${e}`);
      else if (!(e in exporters)) problems.push(`pipeline "${name}": exporter "${e}" is not defined under exporters or connectors`);
    }
  }
  for (const [section, defined] of [['receivers', receivers], ['processors', processors], ['exporters', exporters], ['connectors', connectors]] as const) {
    for (const id of Object.keys(defined)) {
      if (!used.has(`${section}.${id}`)) problems.push(`${section}.${id} is defined but no pipeline uses it`);
    }
  }
  return problems;
}

/** A connector is an exporter of one pipeline and a receiver of another (or the collector refuses to start). */
function connectorProblems(collector: unknown): string[] {
  const c = obj(collector);
  const pipelines = Object.entries(obj(obj(c['service'])['pipelines']));
  const problems: string[] = [];
  for (const id of Object.keys(obj(c['connectors']))) {
    const asExporter = pipelines.filter(([, p]) => names(obj(p)['exporters']).includes(id)).map(([n]) => n);
    const asReceiver = pipelines.filter(([, p]) => names(obj(p)['receivers']).includes(id)).map(([n]) => n);
    if (asExporter.length === 0) problems.push(`connector "${id}" is not an exporter of any pipeline, so it receives nothing`);
    if (asReceiver.length === 0) problems.push(`connector "${id}" is not a receiver of any pipeline, so its output goes nowhere`);
    if (asExporter.length > 0 && asReceiver.length > 0 && !asExporter.some((e) => asReceiver.some((r) => r !== e))) {
      problems.push(`connector "${id}" feeds only the pipeline it reads from ("${asExporter[0]}"): a loop`);
    }
    if (typeOf(id) === 'spanmetrics') {
      if (!asExporter.every((n) => typeOf(n) === 'traces')) problems.push(`connector "${id}" (spanmetrics) must be an exporter of traces pipelines only`);
      if (!asReceiver.every((n) => typeOf(n) === 'metrics')) problems.push(`connector "${id}" (spanmetrics) must be a receiver of metrics pipelines only`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// compose helpers

interface Published {
  host: number | null; // null: docker picks a host port
  container: number;
}

/** The ports a compose service publishes to the host (short and long syntax). */
function published(service: unknown, problems: string[] = [], name = '?'): Published[] {
  const out: Published[] = [];
  for (const entry of list(obj(service)['ports'])) {
    if (isObj(entry)) {
      const target = Number(entry['target']);
      const host = entry['published'] === undefined ? null : Number(entry['published']);
      if (Number.isInteger(target) && (host === null || Number.isInteger(host))) out.push({ host, container: target });
      else problems.push(`service "${name}": cannot read port entry ${JSON.stringify(entry)}`);
      continue;
    }
    const spec = String(entry).replace(/\/(tcp|udp)$/, '');
    const parts = spec.split(':');
    const container = Number(parts[parts.length - 1]);
    const host = parts.length >= 2 ? Number(parts[parts.length - 2]) : null;
    if (!Number.isInteger(container) || (host !== null && !Number.isInteger(host))) {
      problems.push(`service "${name}": cannot read port entry "${String(entry)}" (ranges are not supported here)`);
      continue;
    }
    out.push({ host, container });
  }
  return out;
}

const services = (compose: unknown): Obj => obj(obj(compose)['services']);

// ---------------------------------------------------------------------------------------------
// cross-file checks

/**
 * The collector's OTLP receivers listen on all interfaces, on 4317/4318, and compose publishes
 * exactly those ports (same number on host and container) for the collector and for no one else.
 */
function otlpPortProblems(collector: unknown, compose: unknown): string[] {
  const problems: string[] = [];
  const protocols = obj(obj(obj(obj(collector)['receivers'])['otlp'])['protocols']);
  const svcs = services(compose);
  const collectorService = svcs[COLLECTOR_SERVICE];
  if (collectorService === undefined) return [`compose has no "${COLLECTOR_SERVICE}" service`];
  const ports = published(collectorService, problems, COLLECTOR_SERVICE);
  for (const [protocol, expected] of [['grpc', OTLP_GRPC], ['http', OTLP_HTTP]] as const) {
    const ep = hostPort(obj(protocols[protocol])['endpoint']);
    if (ep === null) {
      problems.push(`receivers.otlp.protocols.${protocol}.endpoint is missing or not host:port`);
      continue;
    }
    if (ep.port !== expected) problems.push(`receivers.otlp.protocols.${protocol} listens on ${ep.port}; OTLP ${protocol} is ${expected}, which the SDKs default to`);
    if (ep.host !== '0.0.0.0' && ep.host !== '' && ep.host !== '[::]') {
      problems.push(`receivers.otlp.protocols.${protocol} listens on "${ep.host}"; inside a container that is unreachable from the host, use 0.0.0.0`);
    }
    const match = ports.find((p) => p.container === ep.port);
    if (!match) problems.push(`compose service "${COLLECTOR_SERVICE}" does not publish the OTLP ${protocol} port ${ep.port}`);
    else if (match.host !== ep.port) {
      problems.push(`compose service "${COLLECTOR_SERVICE}" publishes OTLP ${protocol} container port ${ep.port} on host port ${match.host ?? '(random)'}; publish it as ${ep.port}:${ep.port}`);
    }
  }
  for (const [name, svc] of Object.entries(svcs)) {
    if (name === COLLECTOR_SERVICE) continue;
    for (const p of published(svc, problems, name)) {
      if (p.host === OTLP_GRPC || p.host === OTLP_HTTP || p.container === OTLP_GRPC || p.container === OTLP_HTTP) {
        problems.push(`compose service "${name}" publishes ${p.host ?? '?'}:${p.container}; only "${COLLECTOR_SERVICE}" may take OTLP (4317/4318) from the host`);
      }
    }
  }
  return problems;
}

/** Every OTLP exporter aimed at a compose service names a real service, on a port it exposes. */
function jaegerExportProblems(collector: unknown, compose: unknown): string[] {
  const problems: string[] = [];
  const svcs = services(compose);
  const exporters = obj(obj(collector)['exporters']);
  const toJaeger = Object.entries(exporters).filter(([id]) => typeOf(id) === 'otlp' || typeOf(id) === 'otlp_grpc');
  if (toJaeger.length === 0) problems.push('no otlp exporter is defined, so traces never reach Jaeger');
  let reachesJaeger = false;
  for (const [id, raw] of toJaeger) {
    const ep = hostPort(obj(raw)['endpoint']);
    if (ep === null) {
      problems.push(`exporters.${id}.endpoint is missing or not host:port`);
      continue;
    }
    const svc = svcs[ep.host];
    if (svc === undefined) {
      problems.push(`exporters.${id} sends to "${ep.host}", which is not a compose service (services: ${Object.keys(svcs).join(', ')})`);
      continue;
    }
    if (ep.host === JAEGER_SERVICE) reachesJaeger = true;
    const exposed = names(obj(svc)['expose']).map((p) => Number(p.replace(/\/(tcp|udp)$/, '')));
    if (!exposed.includes(ep.port)) {
      problems.push(`exporters.${id} sends to ${ep.host}:${ep.port}, but service "${ep.host}" lists ${exposed.join(', ') || 'no ports'} under expose`);
    }
    if (ep.host === JAEGER_SERVICE && ep.port !== OTLP_GRPC) {
      problems.push(`exporters.${id} sends to jaeger:${ep.port}; Jaeger's OTLP gRPC receiver listens on ${OTLP_GRPC}`);
    }
    if (obj(obj(raw)['tls'])['insecure'] !== true) {
      problems.push(`exporters.${id} uses TLS, but Jaeger all-in-one serves plain gRPC; set tls.insecure: true`);
    }
  }
  if (toJaeger.length > 0 && !reachesJaeger) problems.push(`no otlp exporter sends to the "${JAEGER_SERVICE}" service`);
  return problems;
}

/** Prometheus scrapes the collector's service name on the collector's prometheus exporter port. */
function scrapeProblems(collector: unknown, compose: unknown, prometheus: unknown): string[] {
  const problems: string[] = [];
  const exporterEp = hostPort(obj(obj(obj(collector)['exporters'])['prometheus'])['endpoint']);
  if (exporterEp === null) return ['exporters.prometheus.endpoint is missing or not host:port'];
  const targets = list(obj(prometheus)['scrape_configs']).flatMap((job) =>
    list(obj(job)['static_configs']).flatMap((sc) => names(obj(sc)['targets'])),
  );
  if (targets.length === 0) problems.push('prometheus.yml has no static scrape targets');
  const svcs = services(compose);
  const hits = targets.filter((t) => {
    const hp = hostPort(t);
    return hp !== null && hp.host === COLLECTOR_SERVICE && hp.port === exporterEp.port;
  });
  if (hits.length === 0) {
    problems.push(`no prometheus scrape target is ${COLLECTOR_SERVICE}:${exporterEp.port} (the collector's prometheus exporter); targets: ${targets.join(', ') || '(none)'}`);
  }
  for (const t of targets) {
    const hp = hostPort(t);
    if (hp === null) problems.push(`scrape target "${t}" is not host:port`);
    else if (hp.host !== 'localhost' && svcs[hp.host] === undefined) problems.push(`scrape target "${t}" names no compose service`);
  }
  return problems;
}

/** The files compose mounts exist, and each service mounts the config these tests check. */
function mountProblems(compose: unknown, exists: (path: string) => boolean): string[] {
  const problems: string[] = [];
  const svcs = services(compose);
  const wanted: Record<string, string> = {
    [JAEGER_SERVICE]: './stack/jaeger-backend.yaml',
    [COLLECTOR_SERVICE]: './collector/otel-collector.yaml',
    prometheus: './collector/prometheus.yml',
  };
  for (const [name, file] of Object.entries(wanted)) {
    const sources = list(obj(svcs[name])['volumes']).map((v) => (isObj(v) ? String(v['source']) : String(v).split(':')[0]!));
    if (!sources.includes(file)) problems.push(`service "${name}" does not mount ${file}`);
  }
  for (const [name, svc] of Object.entries(svcs)) {
    for (const v of list(obj(svc)['volumes'])) {
      const source = isObj(v) ? String(v['source']) : String(v).split(':')[0]!;
      if (source.startsWith('./') && !exists(source)) problems.push(`service "${name}" mounts ${source}, which does not exist`);
    }
  }
  return problems;
}

/** "registry:5000/org/name:tag@sha256:…" -> name and tag (null when there is none). */
function imageRef(image: string): { name: string; tag: string | null } {
  const noDigest = image.split('@')[0]!;
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  if (colon > slash) return { name: noDigest.slice(0, colon), tag: noDigest.slice(colon + 1) };
  return { name: noDigest, tag: null };
}

/** Every image is pinned to a real tag (not latest, not a bare name), and Jaeger is v2. */
function imageProblems(compose: unknown): string[] {
  const problems: string[] = [];
  const svcs = services(compose);
  if (Object.keys(svcs).length === 0) problems.push('compose defines no services');
  for (const [name, svc] of Object.entries(svcs)) {
    const image = obj(svc)['image'];
    if (typeof image !== 'string' || image === '') {
      problems.push(`service "${name}" has no image`);
      continue;
    }
    const { name: repo, tag } = imageRef(image);
    if (tag === null) problems.push(`service "${name}": image "${image}" has no tag; pin a version`);
    else if (/^(latest|main|master|stable|edge|nightly)$/i.test(tag)) problems.push(`service "${name}": image "${image}" uses the moving tag "${tag}"; pin a version`);
    else if (!/\d/.test(tag)) problems.push(`service "${name}": image "${image}" tag "${tag}" is not a version`);
    if (name === JAEGER_SERVICE) {
      if (!/(^|\/)jaegertracing\/jaeger$/.test(repo)) {
        problems.push(`service "${name}": image "${repo}" is not jaegertracing/jaeger (the v1 all-in-one images are end of life)`);
      }
      const major = tag === null ? NaN : Number(/^v?(\d+)\./.exec(tag)?.[1]);
      if (major !== 2) problems.push(`service "${name}": Jaeger tag "${tag ?? ''}" is not a 2.x release`);
    }
  }
  if (svcs[JAEGER_SERVICE] === undefined) problems.push(`compose has no "${JAEGER_SERVICE}" service`);
  return problems;
}

// ---------------------------------------------------------------------------------------------
// the Jaeger backend and the stack script

/** The collector runs on the Jaeger binary: both services use one image, so one release is tested. */
function sameBinaryProblems(compose: unknown): string[] {
  const svcs = services(compose);
  const jaeger = obj(svcs[JAEGER_SERVICE])['image'];
  const coll = obj(svcs[COLLECTOR_SERVICE])['image'];
  return jaeger === coll ? [] : [`service "${COLLECTOR_SERVICE}" runs image "${String(coll)}" but "${JAEGER_SERVICE}" runs "${String(jaeger)}"; the collector config is written for the Jaeger binary`];
}

/** The backend stores what it receives, queries the same storage, and receives where the collector sends. */
function backendProblems(backend: unknown, collector: unknown): string[] {
  const problems: string[] = [];
  const b = obj(backend);
  const stores = Object.keys(obj(obj(obj(b['extensions'])['jaeger_storage'])['backends']));
  const queried = obj(obj(obj(b['extensions'])['jaeger_query'])['storage'])['traces'];
  const written = obj(obj(b['exporters'])['jaeger_storage_exporter'])['trace_storage'];
  if (typeof queried !== 'string' || !stores.includes(queried)) problems.push(`jaeger_query reads storage "${String(queried)}", which jaeger_storage does not define (${stores.join(', ') || 'none'})`);
  if (written !== queried) problems.push(`jaeger_storage_exporter writes to "${String(written)}" but jaeger_query reads "${String(queried)}": stored traces would never be found`);
  const pipeline = obj(obj(obj(b['service'])['pipelines'])['traces']);
  if (!names(pipeline['exporters']).includes('jaeger_storage_exporter')) problems.push('the backend traces pipeline does not export to jaeger_storage_exporter');
  const extensions = names(obj(b['service'])['extensions']);
  for (const ext of ['jaeger_storage', 'jaeger_query']) if (!extensions.includes(ext)) problems.push(`service.extensions does not enable ${ext}`);
  const receiver = hostPort(obj(obj(obj(obj(b['receivers'])['otlp'])['protocols'])['grpc'])['endpoint']);
  const sent = hostPort(obj(obj(obj(collector)['exporters'])['otlp/jaeger'])['endpoint']);
  if (receiver === null) problems.push("the backend's receivers.otlp.protocols.grpc.endpoint is missing or not host:port");
  else if (sent !== null && sent.port !== receiver.port) problems.push(`the collector sends to port ${sent.port}, the backend's OTLP gRPC receiver listens on ${receiver.port}`);
  return problems;
}

interface StackService {
  name: string;
  env: Record<string, string>;
}
interface StackConfig {
  host: string;
  urls: Record<string, string>;
  services: StackService[];
}

/** Every address a config listens on, by where it appears. */
function listeners(doc: unknown, kind: 'collector' | 'backend'): Record<string, string> {
  const d = obj(doc);
  const ext = obj(d['extensions']);
  const out: Record<string, string> = {};
  const add = (where: string, v: unknown) => {
    if (v !== undefined) out[where] = String(v);
  };
  add('receivers.otlp.grpc', obj(obj(obj(obj(d['receivers'])['otlp'])['protocols'])['grpc'])['endpoint']);
  add('receivers.otlp.http', obj(obj(obj(obj(d['receivers'])['otlp'])['protocols'])['http'])['endpoint']);
  add('extensions.healthcheckv2', obj(obj(ext['healthcheckv2'])['http'])['endpoint']);
  if (kind === 'collector') {
    add('exporters.prometheus', obj(obj(d['exporters'])['prometheus'])['endpoint']);
    const reader = obj(obj(obj(obj(list(obj(obj(obj(d['service'])['telemetry'])['metrics'])['readers'])[0])['pull'])['exporter'])['prometheus']);
    if (reader['host'] !== undefined) add('service.telemetry', `${String(reader['host'])}:${String(reader['port'])}`);
  } else {
    add('jaeger_query.http', obj(obj(ext['jaeger_query'])['http'])['endpoint']);
    add('jaeger_query.grpc', obj(obj(ext['jaeger_query'])['grpc'])['endpoint']);
  }
  return out;
}

/** Run with the stack script's environment: loopback only, no port twice, the URLs it hands out are served. */
function loopbackProblems(cfg: StackConfig, coll: unknown, backend: unknown): string[] {
  const problems: string[] = [];
  const all = [
    ...Object.entries(listeners(coll, 'collector')).map(([w, a]) => [`collector ${w}`, a] as const),
    ...Object.entries(listeners(backend, 'backend')).map(([w, a]) => [`jaeger ${w}`, a] as const),
  ];
  const seen = new Map<number, string>();
  for (const [where, address] of all) {
    const hp = hostPort(address);
    if (hp === null) {
      problems.push(`${where} listens on "${address}", not host:port`);
      continue;
    }
    if (hp.host !== cfg.host) problems.push(`${where} listens on ${address}; the stack script binds ${cfg.host} only`);
    const other = seen.get(hp.port);
    if (other !== undefined) problems.push(`${where} and ${other} both listen on port ${hp.port}`);
    seen.set(hp.port, where);
  }
  const port = (url: string | undefined) => (url === undefined ? NaN : Number(new URL(url).port));
  const otlp = hostPort(listeners(coll, 'collector')['receivers.otlp.http']);
  if (otlp?.port !== port(cfg.urls['SYMFONIC_STACK_OTLP'])) problems.push(`SYMFONIC_STACK_OTLP is ${cfg.urls['SYMFONIC_STACK_OTLP']}, the collector's OTLP/HTTP receiver listens on ${otlp?.port}`);
  const query = hostPort(listeners(backend, 'backend')['jaeger_query.http']);
  if (query?.port !== port(cfg.urls['SYMFONIC_STACK_JAEGER'])) problems.push(`SYMFONIC_STACK_JAEGER is ${cfg.urls['SYMFONIC_STACK_JAEGER']}, Jaeger's query API listens on ${query?.port}`);
  problems.push(...backendProblems(backend, coll));
  return problems;
}

async function loadStackConfig(env: Record<string, string> = {}): Promise<StackConfig> {
  const specifier: string = '../../scripts/stack-config.mjs';
  const mod = (await import(specifier)) as { stackConfig(env: Record<string, string>): StackConfig };
  return mod.stackConfig(env);
}
const envOf = (cfg: StackConfig, name: string): Record<string, string> => cfg.services.find((s) => s.name === name)?.env ?? {};

// ---------------------------------------------------------------------------------------------

const collector = load('collector/otel-collector.yaml');
const compose = load('docker-compose.yml');
const prometheus = load('collector/prometheus.yml');
const backend = load('stack/jaeger-backend.yaml');
const clone = <T>(x: T): T => structuredClone(x);
/** A broken copy: `edit` mutates a clone of the parsed file. */
function broken(x: unknown, edit: (o: Obj) => void): Obj {
  const c = clone(x) as Obj;
  edit(c);
  return c;
}
const at = (o: unknown, ...path: string[]): Obj => path.reduce<Obj>((acc, k) => obj(acc[k]), obj(o));

describe('the stack files as committed', () => {
  it('wire every pipeline component to a definition, and use every definition', () => {
    expect(pipelineProblems(collector)).toEqual([]);
  });

  it('use each connector as an exporter in one pipeline and a receiver in another', () => {
    expect(connectorProblems(collector)).toEqual([]);
    expect(Object.keys(at(collector, 'connectors'))).toContain('spanmetrics');
  });

  it('publish the collector OTLP ports, and only the collector', () => {
    expect(otlpPortProblems(collector, compose)).toEqual([]);
  });

  it('send traces to the jaeger service on its OTLP port', () => {
    expect(jaegerExportProblems(collector, compose)).toEqual([]);
  });

  it('scrape the collector prometheus exporter by service name and port', () => {
    expect(scrapeProblems(collector, compose, prometheus)).toEqual([]);
  });

  it('mount the config files that exist', () => {
    expect(mountProblems(compose, (p) => existsSync(root + p))).toEqual([]);
  });

  it('pin every image, with Jaeger on 2.x', () => {
    expect(imageProblems(compose)).toEqual([]);
    expect(obj(services(compose)[JAEGER_SERVICE])['image']).toBe('jaegertracing/jaeger:2.13.0');
  });

  it('run the collector on the Jaeger image', () => {
    expect(sameBinaryProblems(compose)).toEqual([]);
  });

  it('give every ${env:…} reference a default, so compose needs no environment', () => {
    for (const file of ['collector/otel-collector.yaml', 'stack/jaeger-backend.yaml']) {
      expect(envDefaultProblems(file, read(file))).toEqual([]);
    }
    expect(read('collector/otel-collector.yaml')).toMatch(/\$\{env:/);
  });

  it('store, query and receive traces in the Jaeger backend where the collector sends them', () => {
    expect(backendProblems(backend, collector)).toEqual([]);
  });

  it("wire the stack script's loopback ports: 127.0.0.1 only, no port twice, the URLs it exports served", async () => {
    const cfg = await loadStackConfig();
    const coll = load('collector/otel-collector.yaml', envOf(cfg, 'collector'));
    const back = load('stack/jaeger-backend.yaml', envOf(cfg, 'jaeger'));
    expect(loopbackProblems(cfg, coll, back)).toEqual([]);
    expect(Object.keys(cfg.urls).sort()).toEqual(['SYMFONIC_STACK_JAEGER', 'SYMFONIC_STACK_OTLP', 'SYMFONIC_STACK_POSTGRES', 'SYMFONIC_STACK_PROMETHEUS', 'SYMFONIC_STACK_REDIS']);
    const moved = await loadStackConfig({ SYMFONIC_STACK_PORT_BASE: '31000' });
    expect(moved.urls['SYMFONIC_STACK_OTLP']).toBe('http://127.0.0.1:31318');
    expect(loopbackProblems(moved, load('collector/otel-collector.yaml', envOf(moved, 'collector')), load('stack/jaeger-backend.yaml', envOf(moved, 'jaeger')))).toEqual([]);
  });

  it('publish the UIs the docs point at', () => {
    const hostPorts = (name: string) => published(services(compose)[name]).map((p) => p.host);
    expect(hostPorts(JAEGER_SERVICE)).toContain(16686);
    expect(hostPorts('prometheus')).toContain(9090);
    expect(hostPorts(COLLECTOR_SERVICE)).toContain(8889);
  });
});

describe('each check catches a broken stack', () => {
  it('an undefined processor, receiver or exporter in a pipeline', () => {
    const c = broken(collector, (o) => {
      at(o, 'service', 'pipelines', 'traces')['processors'] = ['batch', 'tail_sampling'];
      at(o, 'service', 'pipelines', 'metrics')['exporters'] = ['prometheus', 'debug'];
      at(o, 'service', 'pipelines', 'metrics')['receivers'] = ['otlp', 'spanmetrics', 'hostmetrics'];
    });
    const problems = pipelineProblems(c);
    expect(problems).toContain('pipeline "traces": processor "tail_sampling" is not defined under processors');
    expect(problems).toContain('pipeline "metrics": exporter "debug" is not defined under exporters or connectors');
    expect(problems).toContain('pipeline "metrics": receiver "hostmetrics" is not defined under receivers or connectors');
  });

  it('a defined exporter no pipeline uses, and a pipeline with a bad name', () => {
    const c = broken(collector, (o) => {
      at(o, 'exporters')['debug'] = { verbosity: 'detailed' };
      const pipelines = at(o, 'service', 'pipelines');
      pipelines['spans'] = pipelines['traces'];
      delete pipelines['traces'];
    });
    const problems = pipelineProblems(c);
    expect(problems).toContain('exporters.debug is defined but no pipeline uses it');
    expect(problems.some((p) => p.startsWith('pipeline "spans": the name must be'))).toBe(true);
  });

  it('a connector used only as an exporter (its metrics go nowhere)', () => {
    const c = broken(collector, (o) => {
      at(o, 'service', 'pipelines', 'metrics')['receivers'] = ['otlp'];
    });
    expect(connectorProblems(c)).toContain('connector "spanmetrics" is not a receiver of any pipeline, so its output goes nowhere');
  });

  it('a connector used only as a receiver, or wired backwards', () => {
    const onlyReceiver = broken(collector, (o) => {
      at(o, 'service', 'pipelines', 'traces')['exporters'] = ['otlp/jaeger'];
    });
    expect(connectorProblems(onlyReceiver)).toContain('connector "spanmetrics" is not an exporter of any pipeline, so it receives nothing');
    const backwards = broken(collector, (o) => {
      at(o, 'service', 'pipelines', 'traces')['receivers'] = ['otlp', 'spanmetrics'];
      at(o, 'service', 'pipelines', 'traces')['exporters'] = ['otlp/jaeger'];
      at(o, 'service', 'pipelines', 'metrics')['exporters'] = ['prometheus', 'spanmetrics'];
      at(o, 'service', 'pipelines', 'metrics')['receivers'] = ['otlp'];
    });
    const problems = connectorProblems(backwards);
    expect(problems).toContain('connector "spanmetrics" (spanmetrics) must be an exporter of traces pipelines only');
    expect(problems).toContain('connector "spanmetrics" (spanmetrics) must be a receiver of metrics pipelines only');
  });

  it('a connector that feeds the pipeline it reads from', () => {
    const loop = broken(collector, (o) => {
      at(o, 'service', 'pipelines', 'traces')['receivers'] = ['otlp', 'spanmetrics'];
      at(o, 'service', 'pipelines', 'metrics')['receivers'] = ['otlp'];
    });
    expect(connectorProblems(loop)).toContain('connector "spanmetrics" feeds only the pipeline it reads from ("traces"): a loop');
  });

  it('a collector listening on another port than compose publishes', () => {
    const c = broken(collector, (o) => {
      at(o, 'receivers', 'otlp', 'protocols', 'http')['endpoint'] = '0.0.0.0:4319';
    });
    const problems = otlpPortProblems(c, compose);
    expect(problems).toContain('receivers.otlp.protocols.http listens on 4319; OTLP http is 4318, which the SDKs default to');
    expect(problems).toContain('compose service "otel-collector" does not publish the OTLP http port 4319');
  });

  it('a collector bound to localhost inside its container', () => {
    const c = broken(collector, (o) => {
      at(o, 'receivers', 'otlp', 'protocols', 'grpc')['endpoint'] = 'localhost:4317';
    });
    expect(otlpPortProblems(c, compose).some((p) => p.includes('listens on "localhost"'))).toBe(true);
  });

  it('an OTLP port remapped on the host, or not published at all', () => {
    const remapped = broken(compose, (o) => {
      at(o, 'services', COLLECTOR_SERVICE)['ports'] = ['14317:4317', '4318:4318', '8889:8889'];
    });
    expect(otlpPortProblems(collector, remapped)).toContain(
      'compose service "otel-collector" publishes OTLP grpc container port 4317 on host port 14317; publish it as 4317:4317',
    );
    const missing = broken(compose, (o) => {
      at(o, 'services', COLLECTOR_SERVICE)['ports'] = [{ target: 4318, published: 4318 }];
    });
    expect(otlpPortProblems(collector, missing)).toContain('compose service "otel-collector" does not publish the OTLP grpc port 4317');
  });

  it('Jaeger publishing OTLP itself, bypassing the collector', () => {
    const c = broken(compose, (o) => {
      at(o, 'services', JAEGER_SERVICE)['ports'] = ['16686:16686', '127.0.0.1:4317:4317/tcp'];
    });
    expect(otlpPortProblems(collector, c)).toContain(
      'compose service "jaeger" publishes 4317:4317; only "otel-collector" may take OTLP (4317/4318) from the host',
    );
  });

  it('an exporter aimed at a host that is not a compose service, or at the wrong port', () => {
    const wrongHost = broken(collector, (o) => {
      at(o, 'exporters', 'otlp/jaeger')['endpoint'] = 'localhost:4317';
    });
    const hostProblems = jaegerExportProblems(wrongHost, compose);
    expect(hostProblems.some((p) => p.startsWith('exporters.otlp/jaeger sends to "localhost", which is not a compose service'))).toBe(true);
    expect(hostProblems).toContain('no otlp exporter sends to the "jaeger" service');
    const wrongPort = broken(collector, (o) => {
      at(o, 'exporters', 'otlp/jaeger')['endpoint'] = 'jaeger:14250';
    });
    const portProblems = jaegerExportProblems(wrongPort, compose);
    expect(portProblems).toContain("exporters.otlp/jaeger sends to jaeger:14250; Jaeger's OTLP gRPC receiver listens on 4317");
    expect(portProblems).toContain('exporters.otlp/jaeger sends to jaeger:14250, but service "jaeger" lists 4317 under expose');
  });

  it('an exporter to Jaeger that expects TLS', () => {
    const c = broken(collector, (o) => {
      delete at(o, 'exporters', 'otlp/jaeger')['tls'];
    });
    expect(jaegerExportProblems(c, compose)).toContain(
      'exporters.otlp/jaeger uses TLS, but Jaeger all-in-one serves plain gRPC; set tls.insecure: true',
    );
  });

  it('a scrape target on the wrong port or host', () => {
    const wrongPort = broken(prometheus, (o) => {
      obj(list(obj(list(o['scrape_configs'])[0])['static_configs'])[0])['targets'] = ['otel-collector:8888'];
    });
    expect(scrapeProblems(collector, compose, wrongPort)[0]).toMatch(/^no prometheus scrape target is otel-collector:8889/);
    const wrongHost = broken(prometheus, (o) => {
      obj(list(obj(list(o['scrape_configs'])[0])['static_configs'])[0])['targets'] = ['collector:8889'];
    });
    expect(scrapeProblems(collector, compose, wrongHost)).toContain('scrape target "collector:8889" names no compose service');
    const movedExporter = broken(collector, (o) => {
      at(o, 'exporters', 'prometheus')['endpoint'] = '0.0.0.0:9464';
    });
    expect(scrapeProblems(movedExporter, compose, prometheus)[0]).toMatch(/^no prometheus scrape target is otel-collector:9464/);
  });

  it('a mount of a config file that does not exist', () => {
    const c = broken(compose, (o) => {
      at(o, 'services', COLLECTOR_SERVICE)['volumes'] = ['./collector/otelcol.yaml:/etc/otelcol-contrib/config.yaml:ro'];
    });
    const problems = mountProblems(c, (p) => existsSync(root + p));
    expect(problems).toContain('service "otel-collector" does not mount ./collector/otel-collector.yaml');
    expect(problems).toContain('service "otel-collector" mounts ./collector/otelcol.yaml, which does not exist');
  });

  it('an unpinned or latest image, and a Jaeger that is not 2.x', () => {
    const c = broken(compose, (o) => {
      at(o, 'services', 'prometheus')['image'] = 'prom/prometheus';
      at(o, 'services', COLLECTOR_SERVICE)['image'] = 'otel/opentelemetry-collector-contrib:latest';
      at(o, 'services', JAEGER_SERVICE)['image'] = 'jaegertracing/jaeger:1.76.0';
    });
    const problems = imageProblems(c);
    expect(problems).toContain('service "prometheus": image "prom/prometheus" has no tag; pin a version');
    expect(problems).toContain(
      'service "otel-collector": image "otel/opentelemetry-collector-contrib:latest" uses the moving tag "latest"; pin a version',
    );
    expect(problems).toContain('service "jaeger": Jaeger tag "1.76.0" is not a 2.x release');
    const v1 = broken(compose, (o) => {
      at(o, 'services', JAEGER_SERVICE)['image'] = 'jaegertracing/all-in-one:1.76.0';
    });
    expect(imageProblems(v1).some((p) => p.includes('is not jaegertracing/jaeger'))).toBe(true);
  });

  it('reads registry hosts with ports and digests without mistaking them for tags', () => {
    const c = broken(compose, (o) => {
      at(o, 'services', 'prometheus')['image'] = 'registry.local:5000/prom/prometheus';
      at(o, 'services', JAEGER_SERVICE)['image'] = 'cr.jaegertracing.io/jaegertracing/jaeger:2.11.0@sha256:abc';
    });
    const problems = imageProblems(c);
    expect(problems).toEqual(['service "prometheus": image "registry.local:5000/prom/prometheus" has no tag; pin a version']);
  });

  it('a collector on another image than Jaeger', () => {
    const c = broken(compose, (o) => {
      at(o, 'services', COLLECTOR_SERVICE)['image'] = 'otel/opentelemetry-collector-contrib:0.139.0';
    });
    expect(sameBinaryProblems(c)[0]).toMatch(/runs image "otel\/opentelemetry-collector-contrib:0.139.0" but "jaeger" runs/);
  });

  it('an environment reference without a default', () => {
    expect(envDefaultProblems('x.yaml', 'endpoint: ${env:SYMFONIC_X}\nother: ${env:SYMFONIC_Y:-0.0.0.0:1}')).toEqual([
      'x.yaml: ${env:SYMFONIC_X} has no default (write ${env:SYMFONIC_X:-value})',
    ]);
    expect(expandEnv('a: ${env:A:-1.2.3.4:5}\nb: ${env:B:-x}', { B: 'y' })).toBe('a: 1.2.3.4:5\nb: y');
  });

  it('a backend that queries another storage than it writes, or receives on another port', () => {
    const b = broken(backend, (o) => {
      at(o, 'exporters', 'jaeger_storage_exporter')['trace_storage'] = 'elsewhere';
      at(o, 'extensions', 'jaeger_query', 'storage')['traces'] = 'missing';
      at(o, 'receivers', 'otlp', 'protocols', 'grpc')['endpoint'] = '0.0.0.0:14317';
    });
    const problems = backendProblems(b, collector);
    expect(problems.some((p) => p.startsWith('jaeger_query reads storage "missing"'))).toBe(true);
    expect(problems).toContain('jaeger_storage_exporter writes to "elsewhere" but jaeger_query reads "missing": stored traces would never be found');
    expect(problems).toContain("the collector sends to port 4317, the backend's OTLP gRPC receiver listens on 14317");
  });

  it('a stack script environment that binds all interfaces, reuses a port or exports a URL nobody serves', async () => {
    const cfg = await loadStackConfig();
    const env = { ...envOf(cfg, 'collector'), SYMFONIC_COLLECTOR_HEALTH: '0.0.0.0:24133', SYMFONIC_COLLECTOR_PROMETHEUS: `${cfg.host}:24318` };
    const problems = loopbackProblems({ ...cfg, urls: { ...cfg.urls, SYMFONIC_STACK_JAEGER: 'http://127.0.0.1:1' } }, load('collector/otel-collector.yaml', env), load('stack/jaeger-backend.yaml', envOf(cfg, 'jaeger')));
    expect(problems).toContain('collector extensions.healthcheckv2 listens on 0.0.0.0:24133; the stack script binds 127.0.0.1 only');
    expect(problems).toContain('collector exporters.prometheus and collector receivers.otlp.http both listen on port 24318');
    expect(problems).toContain("SYMFONIC_STACK_JAEGER is http://127.0.0.1:1, Jaeger's query API listens on 24686");
  });
});

// Where the local observability stack lives: its ports, folders, binaries and the environment each
// program is started with. Everything the stack script does is derived from stackConfig().
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { POSTGRES_SUPERUSER, postgresBinDir, postgresHome } from './stack-postgres.mjs';

export const JAEGER_MODULE_VERSION = 'v1.76.0'; // the Go module version of Jaeger v2.13.0
export const REPO = resolve(fileURLToPath(new URL('..', import.meta.url)));

/**
 * Port offsets from SYMFONIC_STACK_PORT_BASE (default 24000). The 24xxx range sits away from the
 * well-known ports (4317, 16686, 9090, 6379...) so the stack runs beside a user's own Jaeger,
 * collector, Prometheus or Redis; the last digits echo the usual port so they are easy to read.
 */
const OFFSETS = {
  collectorOtlpGrpc: 317,
  collectorOtlpHttp: 318,
  collectorPrometheus: 889,
  collectorTelemetry: 888,
  collectorHealth: 133,
  jaegerOtlpGrpc: 417,
  jaegerQueryHttp: 686,
  jaegerQueryGrpc: 685,
  jaegerHealth: 134,
  prometheus: 90,
  redis: 379,
  postgres: 432,
};

function portBase(env) {
  const raw = env.SYMFONIC_STACK_PORT_BASE;
  if (raw === undefined || raw === '') return 24000;
  const base = Number(raw);
  if (!Number.isInteger(base) || base < 1024 || base > 64000) {
    throw new Error(`SYMFONIC_STACK_PORT_BASE=${raw} is not a port base: use an integer from 1024 to 64000 (default 24000); ports are base+90 to base+889.`);
  }
  return base;
}

export function stackConfig(env = process.env) {
  const base = portBase(env);
  const ports = Object.fromEntries(Object.entries(OFFSETS).map(([k, v]) => [k, base + v]));
  const host = '127.0.0.1';
  const at = (port) => `${host}:${port}`;
  const cacheDir = env.SYMFONIC_CACHE_DIR || join(homedir(), '.cache', 'symfonic');
  const stateDir = env.SYMFONIC_STACK_DIR || join(REPO, '.stack');
  const jaegerBin = join(cacheDir, 'bin', `jaeger-${JAEGER_MODULE_VERSION}`);
  const urls = {
    SYMFONIC_STACK_OTLP: `http://${at(ports.collectorOtlpHttp)}`,
    SYMFONIC_STACK_JAEGER: `http://${at(ports.jaegerQueryHttp)}`,
    SYMFONIC_STACK_PROMETHEUS: `http://${at(ports.prometheus)}`,
    SYMFONIC_STACK_REDIS: `redis://${at(ports.redis)}`,
    SYMFONIC_STACK_POSTGRES: `postgresql://${POSTGRES_SUPERUSER}@${at(ports.postgres)}/symfonic`,
  };
  const pgBin = postgresBinDir(env);
  const pgDir = postgresHome(stateDir);
  /** The services in start order; each is started, checked and stopped the same way. */
  const services = [
    {
      name: 'jaeger',
      what: 'Jaeger v2 backend: OTLP in from the collector, memory storage, query API',
      command: jaegerBin,
      args: ['--config', join(REPO, 'stack', 'jaeger-backend.yaml')],
      env: {
        SYMFONIC_JAEGER_OTLP_GRPC: at(ports.jaegerOtlpGrpc),
        SYMFONIC_JAEGER_QUERY_HTTP: at(ports.jaegerQueryHttp),
        SYMFONIC_JAEGER_QUERY_GRPC: at(ports.jaegerQueryGrpc),
        SYMFONIC_JAEGER_HEALTH: at(ports.jaegerHealth),
      },
      ports: [ports.jaegerOtlpGrpc, ports.jaegerQueryHttp, ports.jaegerQueryGrpc, ports.jaegerHealth],
      ready: { http: `http://${at(ports.jaegerHealth)}/status` },
    },
    {
      name: 'collector',
      what: 'OpenTelemetry Collector (the Jaeger binary on collector/otel-collector.yaml): OTLP in, traces to Jaeger, span metrics and app metrics to its Prometheus exporter',
      command: jaegerBin,
      args: ['--config', join(REPO, 'collector', 'otel-collector.yaml')],
      env: {
        SYMFONIC_COLLECTOR_OTLP_GRPC: at(ports.collectorOtlpGrpc),
        SYMFONIC_COLLECTOR_OTLP_HTTP: at(ports.collectorOtlpHttp),
        SYMFONIC_JAEGER_OTLP: at(ports.jaegerOtlpGrpc),
        SYMFONIC_COLLECTOR_PROMETHEUS: at(ports.collectorPrometheus),
        SYMFONIC_COLLECTOR_HEALTH: at(ports.collectorHealth),
        SYMFONIC_COLLECTOR_TELEMETRY_HOST: host,
        SYMFONIC_COLLECTOR_TELEMETRY_PORT: String(ports.collectorTelemetry),
        // Tests read span metrics seconds after a run, not a quarter of a minute.
        SYMFONIC_SPANMETRICS_FLUSH_INTERVAL: env.SYMFONIC_SPANMETRICS_FLUSH_INTERVAL || '1s',
      },
      ports: [ports.collectorOtlpGrpc, ports.collectorOtlpHttp, ports.collectorPrometheus, ports.collectorTelemetry, ports.collectorHealth],
      ready: { http: `http://${at(ports.collectorHealth)}/status` },
    },
    {
      name: 'prometheus',
      what: "Prometheus, scraping the collector's exporter every second",
      command: 'prometheus',
      args: [
        `--config.file=${join(stateDir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(stateDir, 'prometheus-data')}`,
        `--web.listen-address=${at(ports.prometheus)}`,
        '--storage.tsdb.retention.time=1d',
      ],
      env: {},
      ports: [ports.prometheus],
      ready: { http: `http://${at(ports.prometheus)}/-/ready` },
      prometheus: {
        target: at(ports.collectorPrometheus),
        scrapeInterval: env.SYMFONIC_PROMETHEUS_SCRAPE_INTERVAL || '1s',
        // Alerts for tenants past a budget threshold (the compose file mounts the same file).
        ruleFiles: [join(REPO, 'collector', 'budget-alerts.yml')],
      },
    },
    {
      name: 'redis',
      what: 'Redis with an append-only file (for the shared budget store: spend survives a restart)',
      command: 'redis-server',
      // Budget spend must outlive a restart: without persistence a restarted Redis would count every
      // tenant from zero. appendfsync everysec loses at most the last second of settles on a crash.
      args: ['--port', String(ports.redis), '--bind', host, '--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec', '--dir', stateDir, '--daemonize', 'no', '--protected-mode', 'yes'],
      env: {},
      ports: [ports.redis],
      ready: { redis: { host, port: ports.redis } },
    },
    {
      name: 'postgres',
      what: 'PostgreSQL (the system database of durable runs on DBOS)',
      command: pgBin ? join(pgBin, 'postgres') : 'postgres',
      args: ['-D', join(pgDir, 'data'), '-k', join(pgDir, 'run'), '-h', host, '-p', String(ports.postgres), '-c', 'max_connections=200'],
      env: {},
      ports: [ports.postgres],
      ready: { postgres: { host, port: ports.postgres, user: POSTGRES_SUPERUSER } },
      // SIGINT is PostgreSQL's fast shutdown; SIGTERM would wait for every client to disconnect.
      stopSignal: 'SIGINT',
      postgres: { initdb: pgBin ? join(pgBin, 'initdb') : null, home: pgDir, dataDir: join(pgDir, 'data'), socketDir: join(pgDir, 'run') },
    },
  ];
  return { base, ports, host, cacheDir, stateDir, jaegerBin, urls, services, toolsDir: join(REPO, 'stack', 'jaeger-tools') };
}

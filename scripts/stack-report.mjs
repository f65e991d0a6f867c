// What `npm run stack -- up|status` prints: each service's line, then the addresses of the
// services that are healthy, and only those (a list naming Redis when Redis did not start sends a
// user to an address nothing answers). Every line fits WIDTH columns; a path or URL longer than a
// line gets a line of its own rather than being cut.

export const WIDTH = 80;
const LABEL = 24;

/** `label` and `value` on one line when they fit, else the value under the label, indented. */
function labelled(label, value) {
  const one = `  ${label.padEnd(LABEL)}${value}`;
  return one.length <= WIDTH ? [one] : [`  ${label}`, `      ${value}`];
}

/** A service's lines after `up`: started or already running, then where its log is. */
export function serviceLines(name, result, log) {
  const what = result.started ? `started (pid ${result.pid}, healthy in ${(result.ms / 1000).toFixed(1)} s)` : `already running (pid ${result.pid})`;
  return [`${name.padEnd(10)} ${what}`, `${''.padEnd(10)} log ${log}`];
}

/** The addresses of the healthy services among `statuses` ({ name, healthy }), with an example. */
export function addressLines(cfg, statuses, envFile) {
  const up = new Set(statuses.filter((s) => s.healthy).map((s) => s.name));
  const u = cfg.urls;
  const lines = [];
  if (up.has('collector')) {
    lines.push(...labelled('OTLP/HTTP (collector)', u.SYMFONIC_STACK_OTLP));
    lines.push(...labelled('OTLP/gRPC (collector)', `http://${cfg.host}:${cfg.ports.collectorOtlpGrpc}`));
    lines.push(...labelled('collector /metrics', `http://${cfg.host}:${cfg.ports.collectorPrometheus}/metrics`));
  }
  if (up.has('jaeger')) lines.push(...labelled('Jaeger query API', `${u.SYMFONIC_STACK_JAEGER}/api/v3/traces/<trace id>`));
  if (up.has('prometheus')) lines.push(...labelled('Prometheus', u.SYMFONIC_STACK_PROMETHEUS));
  if (up.has('redis')) lines.push(...labelled('Redis', u.SYMFONIC_STACK_REDIS));
  if (up.has('postgres')) {
    lines.push(...labelled('PostgreSQL', u.SYMFONIC_STACK_POSTGRES));
    lines.push(...labelled('  its data', cfg.services.find((s) => s.name === 'postgres').postgres.home));
  }
  if (envFile !== undefined) lines.push(...labelled('environment', envFile));
  if (up.has('collector') && up.has('jaeger')) {
    lines.push('', '  e.g. npm run demo -- \\', `    --otlp ${u.SYMFONIC_STACK_OTLP} \\`, `    --jaeger-url ${u.SYMFONIC_STACK_JAEGER}`);
  }
  return lines;
}

/** The lines under the services after `up`: ready when every service is healthy, else which are not. */
export function readyLines(statuses, seconds, withBuildSeconds) {
  const down = statuses.filter((s) => !s.healthy).map((s) => s.name);
  const took = `in ${seconds.toFixed(1)} s (${withBuildSeconds.toFixed(1)} s with the build check)`;
  if (down.length === 0) return [`stack ready ${took}`];
  const upNames = statuses.filter((s) => s.healthy).map((s) => s.name);
  return [`${upNames.length === 0 ? 'nothing running' : `running: ${upNames.join(', ')}`} ${took}`, `not running: ${down.join(', ')}`];
}

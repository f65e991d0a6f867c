#!/usr/bin/env node
// npm run stack -- up|down|status|build [service...]
// The local observability stack without Docker: Jaeger v2 (backend), the OpenTelemetry Collector
// pipeline (the same Jaeger binary on collector/otel-collector.yaml), Prometheus, Redis and
// PostgreSQL, all on 127.0.0.1. See docs/design.md, "The observability stack".
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { alive, ensureJaeger } from './stack-build.mjs';
import { stackConfig } from './stack-config.mjs';
import { addressLines, readyLines, serviceLines } from './stack-report.mjs';
import { logFile, serviceStatus, startService, stopService } from './stack-services.mjs';

const USAGE = `Usage: npm run stack -- <command> [service...] [--json]

Commands:
  up [service...]     build Jaeger if needed, start the services (all by default) and wait until healthy
  down [service...]   stop the services this script started (all by default), by pid file
  status [--json]     each service's pid and health; exit 1 unless all are healthy
  build               build the Jaeger binary now (again, if it exists)
  build-if-missing    build the Jaeger binary unless the cache holds it

Services: jaeger, collector, prometheus, redis, postgres.
Environment: SYMFONIC_STACK_PORT_BASE (default 24000), SYMFONIC_CACHE_DIR (default ~/.cache/symfonic),
SYMFONIC_STACK_DIR (default <repo>/.stack).
`;

function pick(cfg, names) {
  if (names.length === 0) return cfg.services;
  return names.map((n) => {
    const svc = cfg.services.find((s) => s.name === n);
    if (!svc) throw new Error(`no service "${n}"; services: ${cfg.services.map((s) => s.name).join(', ')}`);
    return svc;
  });
}

const envFile = (cfg) => join(cfg.stateDir, 'env.json');

async function up(cfg, names) {
  const t0 = Date.now();
  const chosen = pick(cfg, names);
  if (chosen.some((s) => s.command === cfg.jaegerBin)) await ensureJaeger(cfg);
  const tStart = Date.now();
  const startedNow = [];
  try {
    for (const svc of chosen) {
      const r = await startService(cfg, svc);
      if (r.started) startedNow.push(svc);
      for (const line of serviceLines(svc.name, r, logFile(cfg, svc))) console.log(line);
    }
  } catch (error) {
    // A half-started stack is worse than none: stop what this call started, leave the rest.
    for (const svc of startedNow.reverse()) await stopService(cfg, svc);
    throw error;
  }
  const all = await Promise.all(cfg.services.map((s) => serviceStatus(cfg, s)));
  const ready = all.every((s) => s.healthy);
  if (ready) {
    writeFileSync(envFile(cfg), JSON.stringify({ ...cfg.urls, ports: cfg.ports, startedAt: new Date().toISOString() }, null, 2) + '\n');
  }
  console.log(['', ...readyLines(all, (Date.now() - tStart) / 1000, (Date.now() - t0) / 1000)].join('\n'));
  for (const line of addressLines(cfg, all, ready ? envFile(cfg) : undefined)) console.log(line);
}

async function down(cfg, names) {
  const chosen = pick(cfg, names).reverse();
  for (const svc of chosen) {
    const r = await stopService(cfg, svc);
    console.log(`${svc.name.padEnd(10)} ${r.pid === null ? 'not running' : `stopped (pid ${r.pid})`}`);
  }
  rmSync(envFile(cfg), { force: true });
}

async function status(cfg, json) {
  const all = await Promise.all(cfg.services.map((s) => serviceStatus(cfg, s)));
  const ok = all.every((s) => s.healthy);
  if (json) {
    console.log(JSON.stringify({ healthy: ok, services: all, env: cfg.urls }, null, 2));
  } else {
    for (const s of all) console.log(`${s.name.padEnd(10)} ${s.pid === null ? 'not running' : `pid ${s.pid}, ${s.healthy ? 'healthy' : 'NOT healthy'}`}`);
    for (const line of addressLines(cfg, all, ok ? envFile(cfg) : undefined)) console.log(line);
  }
  return ok ? 0 : 1;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * One `up` or `down` at a time per state folder: two test runs starting together would otherwise
 * both find the stack stopped and both start it. A lock whose holder is gone is taken over.
 */
async function withLock(cfg, work) {
  const lock = join(cfg.stateDir, 'stack.lock');
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    try {
      const fd = openSync(lock, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      let holder = NaN;
      try {
        holder = Number(readFileSync(lock, 'utf8'));
      } catch {
        /* removed in between */
      }
      if (!(holder > 0) || !alive(holder)) rmSync(lock, { force: true });
      else if (Date.now() > deadline) throw new Error(`another stack command (pid ${holder}) has held ${lock} for 5 minutes`);
      else await sleep(200);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { force: true });
  }
}

async function main(argv) {
  const json = argv.includes('--json');
  const [command, ...names] = argv.filter((a) => a !== '--json');
  const cfg = stackConfig();
  mkdirSync(cfg.stateDir, { recursive: true });
  switch (command) {
    case 'up':
      await withLock(cfg, () => up(cfg, names));
      return 0;
    case 'down':
      await withLock(cfg, () => down(cfg, names));
      return 0;
    case 'status':
      return status(cfg, json);
    case 'build':
      await ensureJaeger(cfg, { force: true });
      return 0;
    case 'build-if-missing': {
      const { bin, builtMs } = await ensureJaeger(cfg);
      console.log(builtMs === null ? `Jaeger binary present: ${bin}` : `Jaeger built in ${(builtMs / 1000).toFixed(0)} s: ${bin}`);
      return 0;
    }
    case undefined:
    case '-h':
    case '--help':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`stack: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`stack: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);

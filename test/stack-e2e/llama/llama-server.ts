/**
 * The real model server of the llama stack tests: llama.cpp's `llama-server` on SmolLM2-135M-Instruct,
 * as scripts/stack-llama.mjs caches it (built once; `.ci/run` builds it before `npm run test:stack`).
 * Each test file starts its own server in beforeAll and stops it by pid in afterAll; the files run
 * one at a time (vitest.stack.config.ts), so they share the stack's llama port without colliding.
 * The server's log is kept, so a test can read what the server itself says it did.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../support/stack.js';

export interface LlamaPaths {
  bin: string;
  model: string;
  template: string;
  port: number;
  /** The script's arguments for the server (serverArgs in scripts/stack-llama.mjs). */
  args: string[];
}

export interface LlamaServer {
  /** http://127.0.0.1:<port>/v1, what openAICompatible and @ai-sdk/openai take as baseURL. */
  readonly baseURL: string;
  readonly origin: string;
  readonly pid: number;
  /** Everything the server wrote to stdout and stderr so far. */
  log(): string;
  stop(): Promise<void>;
}

/** The model name the server reports (llama-server answers to any name; this is the file's). */
export const MODEL = 'SmolLM2-135M-Instruct';

export function llamaPaths(): LlamaPaths {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'stack-llama.mjs'), 'paths'], { cwd: ROOT, encoding: 'utf8' });
  if (r.error) throw r.error;
  const paths = JSON.parse(r.stdout) as LlamaPaths;
  if (r.status !== 0) {
    throw new Error(
      `llama-server or its model is not cached (${paths.bin}, ${paths.model}, ${paths.template}): ` +
        "run 'node scripts/stack-llama.mjs if-missing' once (about 14 min on an idle 2-core machine; .ci/run does it before the stack tests).",
    );
  }
  return paths;
}

async function healthy(origin: string): Promise<boolean> {
  try {
    const r = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(1000) });
    return r.ok;
  } catch {
    return false;
  }
}

/**
 * Starts llama-server with the script's arguments (loopback, one thread, the Qwen2.5 template)
 * and waits until /health answers 200, which it does once the model is loaded. Later flags win,
 * so `slots` and `extraArgs` override the script's.
 */
export async function startLlamaServer(options: { slots?: number; extraArgs?: string[] } = {}): Promise<LlamaServer> {
  const paths = llamaPaths();
  const origin = `http://127.0.0.1:${paths.port}`;
  if (await healthy(origin)) throw new Error(`something already answers on ${origin}: stop it (another llama-server?) or set SYMFONIC_STACK_PORT_BASE`);
  const slots = options.slots ?? 4;
  const args = [...paths.args, '--parallel', String(slots), '-c', String(2048 * slots), '--seed', '1', ...(options.extraArgs ?? [])];
  const child: ChildProcess = spawn(paths.bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (output += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  while (!(await healthy(origin))) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`llama-server exited (${child.exitCode ?? child.signalCode}) before it was healthy:\n${output.slice(-3000)}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`llama-server was not healthy on ${origin} within 60 s:\n${output.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    baseURL: `${origin}/v1`,
    origin,
    pid: child.pid!,
    log: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      process.kill(child.pid!, 'SIGTERM');
      const timer = setTimeout(() => child.exitCode === null && process.kill(child.pid!, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Spawning dbos-worker.mjs processes and reading what their steps did, for the durable-engine
 * tests against the stack's PostgreSQL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('./dbos-worker.mjs', import.meta.url));
/** The worker running symfonic/durable trees (tree-worker.mjs). */
export const TREE_WORKER = fileURLToPath(new URL('./tree-worker.mjs', import.meta.url));

/** The stack's PostgreSQL with another database in it: each test file keeps its own. */
export function stackDatabase(database: string): string {
  const url = process.env['SYMFONIC_STACK_POSTGRES'];
  if (!url) throw new Error("SYMFONIC_STACK_POSTGRES is not set: run these tests with 'npm run test:stack', whose global setup starts the stack and sets it");
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export interface WorkerEvent {
  type: string;
  [key: string]: unknown;
}

export interface DbosWorker {
  readonly child: ChildProcess;
  /** The first event of a type; rejects when the worker reports an error or exits first. */
  next(type: string, timeoutMs?: number): Promise<WorkerEvent>;
  kill(): Promise<void>;
  /** Resolves once the process exited, with its exit code. */
  exited(): Promise<number | null>;
  /** What it wrote on stderr so far. */
  stderr(): string;
}

export function spawnWorker(mode: string, id: string, env: Record<string, string>, script = WORKER): DbosWorker {
  const child = spawn(process.execPath, [script, mode, id], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const events: WorkerEvent[] = [];
  let stderr = '';
  let buffered = '';
  const listeners = new Set<() => void>();
  child.stdout!.on('data', (d: Buffer) => {
    buffered += d.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') events.push(JSON.parse(line) as WorkerEvent);
    for (const l of listeners) l();
  });
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString('utf8');
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => {
    for (const l of listeners) l();
  });
  const next = (type: string, timeoutMs = 60_000) =>
    new Promise<WorkerEvent>((resolve, reject) => {
      const timer = setTimeout(() => settle(), timeoutMs);
      const settle = () => {
        const hit = events.find((e) => e.type === type);
        const failed = events.find((e) => e.type === 'error');
        const gone = child.exitCode !== null || child.signalCode !== null;
        if (!hit && !failed && !gone && Date.now() < deadline) return;
        clearTimeout(timer);
        listeners.delete(settle);
        if (hit) resolve(hit);
        else reject(new Error(`worker ${mode} ${id} gave no "${type}" (${failed ? `error: ${String(failed['error'])}` : gone ? `exited ${child.signalCode ?? child.exitCode}` : 'timed out'}); stderr:\n${stderr.slice(-2000)}`));
      };
      const deadline = Date.now() + timeoutMs;
      listeners.add(settle);
      settle();
    });
  return {
    child,
    next,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    exited: () => exited.then(() => child.exitCode),
    stderr: () => stderr,
  };
}

/** A tree worker's answer or refusal (tree-worker.mjs), once it exited; the one that does not come is no failure. */
export async function answerOrRefusal(w: DbosWorker, timeoutMs = 120_000): Promise<{ event: WorkerEvent; code: number | null }> {
  const [result, refused] = [w.next('result', timeoutMs), w.next('refused', timeoutMs)];
  result.catch(() => undefined);
  refused.catch(() => undefined);
  const event = await Promise.race([result, refused]);
  return { event, code: await w.exited() };
}

/** The lines of an executions file as [pid, what] pairs, in the order they were written. */
export function executions(file: string): [number, string][] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const at = l.indexOf(' ');
      return [Number(l.slice(0, at)), l.slice(at + 1)];
    });
}

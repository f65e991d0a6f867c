import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('./fleet-worker.mjs', import.meta.url));

export interface Worker {
  readonly child: ChildProcess;
  /** The next message of a type, or a rejection when the worker reports an error or exits first. */
  next<T = Record<string, unknown>>(type: string): Promise<T>;
  /** Resolves with the worker's result message's `result`. */
  result<T>(): Promise<T>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Forks a worker (fleet-worker.mjs unless named) and sends it its configuration. */
export function forkWorker(config: Record<string, unknown>, script: string = WORKER): Worker {
  const child = fork(script, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const inbox: Record<string, unknown>[] = [];
  const waiting: { type: string; resolve: (m: Record<string, unknown>) => void; reject: (e: Error) => void }[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deliver = () => {
    for (let i = 0; i < waiting.length; i++) {
      const w = waiting[i]!;
      const error = inbox.find((m) => m['type'] === 'error');
      if (error) {
        waiting.splice(i--, 1);
        w.reject(new Error(`worker ${child.pid} failed: ${String(error['error'])}`));
        continue;
      }
      const at = inbox.findIndex((m) => m['type'] === w.type);
      if (at >= 0) {
        waiting.splice(i--, 1);
        w.resolve(inbox.splice(at, 1)[0]!);
      }
    }
  };
  child.on('message', (m) => {
    inbox.push(m as Record<string, unknown>);
    deliver();
  });
  child.once('exit', (code, signal) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`worker ${child.pid} exited (${signal ?? code}) before sending "${w.type}"`));
  });
  child.send(config);
  const next = <T,>(type: string) =>
    new Promise<T>((resolve, reject) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        const at = inbox.findIndex((m) => m['type'] === type);
        if (at >= 0) return resolve(inbox.splice(at, 1)[0] as T);
        return reject(new Error(`worker ${child.pid} has exited`));
      }
      waiting.push({ type, resolve: resolve as (m: Record<string, unknown>) => void, reject });
      deliver();
    });
  return {
    child,
    next,
    result: async <T,>() => ((await next<{ result: T }>('result')).result),
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

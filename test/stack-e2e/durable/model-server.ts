/**
 * A loopback Chat Completions server for the durable-tree tests: each agent of the test trees is
 * a model name, answered from a script by the conversation so far, so any worker can make any
 * call. It counts what it received and what it answered (the calls that really happened, and
 * their tokens), by model and by worker, and can hold a model's next call unanswered.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface WireMessage {
  role: string;
  content?: string | null;
  tool_calls?: unknown[];
}

/** Tokens each model's calls report: what a tenant ledger must add up to. */
export const USAGE: Record<string, [number, number]> = { planner: [10, 5], researcher: [8, 4], checker: [6, 3], desk: [7, 2], clerk: [5, 2] };

const call = (model: string, turn: number, name: string, args: object) => ({ id: `call_${model}_${turn}`, type: 'function', function: { name, arguments: JSON.stringify(args) } });

/** The next assistant message of `model` after `messages`. */
function script(model: string, messages: WireMessage[]): { content: string | null; tool_calls?: unknown[] } {
  const last = messages[messages.length - 1];
  const task = messages.find((m) => m.role === 'user')?.content ?? '';
  const after = last?.role === 'tool' ? messages.filter((m) => m.role === 'tool').map((m) => m.content).join(' + ') : undefined;
  const turn = messages.filter((m) => m.role === 'assistant').length + 1;
  switch (model) {
    case 'planner':
      return after !== undefined ? { content: `plan: ${after}` } : { content: null, tool_calls: [call(model, turn, 'run_agent', { name: 'researcher', task: `research ${task}` })] };
    case 'researcher':
      return after !== undefined ? { content: `research: ${after}` } : { content: null, tool_calls: [call(model, turn, 'run_agent', { name: 'checker', task: `check ${task}` })] };
    case 'checker':
      return { content: `checked (${task})` };
    case 'desk':
      return after !== undefined ? { content: `desk: ${after}` } : { content: null, tool_calls: [call(model, turn, 'run_agent', { name: 'clerk', task: 'pay INV-7' })] };
    case 'clerk':
      return after !== undefined ? { content: `clerk: ${after}` } : { content: null, tool_calls: [call(model, turn, 'pay', { invoice: 'INV-7' })] };
    default:
      return { content: `no script for model ${model}` };
  }
}

export interface ModelServer {
  readonly url: string;
  /** Calls received, by model (held ones included). */
  received(model: string): number;
  /** Calls answered, by model: the calls that really happened. */
  answered(model: string): number;
  /** Tokens of every answered call. */
  answeredTokens(): number;
  /** Answered calls by the worker that made them (the x-worker header). */
  byWorker(): Record<string, number>;
  /** Holds the next call of `model` unanswered (until `until` resolves, if given); resolves when it arrives. */
  hold(model: string, until?: Promise<void>): Promise<void>;
  close(): Promise<void>;
}

export async function modelServer(): Promise<ModelServer> {
  const received = new Map<string, number>();
  const answered = new Map<string, number>();
  const workers = new Map<string, number>();
  const holds = new Map<string, { arrived: () => void; until: Promise<void> | undefined }>();
  let tokens = 0;
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString('utf8')));
    req.on('end', () => {
      // openAICompatible asks GET /props before its first request with tools; this server has none.
      if (req.method === 'GET') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(raw) as { model: string; messages: WireMessage[] };
      bump(received, body.model);
      const held = holds.get(body.model);
      if (held !== undefined) {
        holds.delete(body.model);
        held.arrived();
        // Never answered (the worker making it dies waiting), or once the test lets it go.
        if (held.until !== undefined) void held.until.then(() => answer(body, req, res));
        return;
      }
      answer(body, req, res);
    });
  });
  const answer = (body: { model: string; messages: WireMessage[] }, req: IncomingMessage, res: ServerResponse) => {
    const [input, output] = USAGE[body.model] ?? [1, 1];
    const message = script(body.model, body.messages);
    bump(answered, body.model);
    bump(workers, String(req.headers['x-worker'] ?? '?'));
    tokens += input + output;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        model: body.model,
        choices: [{ message: { role: 'assistant', ...message }, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' }],
        usage: { prompt_tokens: input, completion_tokens: output },
      }),
    );
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    received: (m) => received.get(m) ?? 0,
    answered: (m) => answered.get(m) ?? 0,
    answeredTokens: () => tokens,
    byWorker: () => Object.fromEntries(workers),
    hold: (model, until) => new Promise<void>((resolve) => holds.set(model, { arrived: resolve, until })),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

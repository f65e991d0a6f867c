/**
 * Issue 34: `symfonic demo --provider openai-compatible` against the real llama-server, the
 * command README shows. Every agent of the demo tree runs on SmolLM2-135M. What a 135M model
 * cannot do is follow the router's plan (two run_agent calls in one turn, then the writer with
 * their notes): it answers in words, or calls run_agent with arguments that do not fit, so the
 * tree is mostly the router alone. The test holds the demo to what does not depend on the model:
 * it ends, it draws the tree it ran, and the tree's figures are the server's own (read from
 * llama-server's Prometheus counters, which count every token it processed).
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/stack.js';
import { MODEL, startLlamaServer, type LlamaServer } from './llama-server.js';

let server: LlamaServer;
beforeAll(async () => {
  server = await startLlamaServer({ extraArgs: ['--metrics'] });
});
afterAll(async () => {
  await server?.stop();
});

async function counters(): Promise<{ input: number; output: number }> {
  const text = await (await fetch(`${server.origin}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^llamacpp:${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    input: value('prompt_tokens_total') + value('prompt_tokens_cached_total'),
    output: value('tokens_predicted_total'),
  };
}

function demo(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['dist/cli/main.js', 'demo', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    // An upper bound only: each call is capped by the demo's maxTokens.
    const timer = setTimeout(() => child.kill('SIGKILL'), 280_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

interface Node {
  agent: string;
  status: string;
  usage: { inputTokens: number; outputTokens: number };
  totalUsage: { inputTokens: number; outputTokens: number };
  delegations: { child: string; outcome: string }[];
  children: Node[];
}
const walk = (n: Node): Node[] => [n, ...n.children.flatMap(walk)];

describe('symfonic demo --provider openai-compatible → llama-server', () => {
  it('runs the demo tree on the real model and reports the tokens the server counted', async () => {
    const before = await counters();
    const r = await demo(['--json', '--provider', 'openai-compatible', '--base-url', server.baseURL, '--model', MODEL]);
    const after = await counters();
    const tree = JSON.parse(r.stdout) as Node & { answer: string | null; error: unknown };
    expect(tree.agent, r.stderr).toBe('router');
    // The tree's totals are what llama-server processed during the demo, token for token.
    expect(tree.totalUsage).toMatchObject({ inputTokens: after.input - before.input, outputTokens: after.output - before.output });
    expect(tree.totalUsage.outputTokens).toBeGreaterThan(0);
    // Whatever the model asked of run_agent, each delegation has an outcome and a finished run.
    for (const n of walk(tree)) for (const d of n.delegations) expect(d.outcome, `${n.agent} → ${d.child}`).toMatch(/^[a-z_]+$/);
    expect(r.code, r.stderr).toBe(tree.error === null ? 0 : 1);
  });
});

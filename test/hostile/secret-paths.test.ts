/**
 * Issue 29's first finding: a tool's error quoting `DB_PASSWORD=…`, `STRIPE_SECRET_KEY=rk_live_…`
 * or a bare `ghp_…` reached the model verbatim. Every secret below, by the name in front of it or
 * by its published shape, is followed down every road an error text takes to a third party: the
 * tool message the model reads, a child's failure as its parent's model reads it (in process and
 * from a remote child over A2A), the status and exception events of every span, the run's events
 * and the warning logged when a run fails.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, SubAgent, SymfonicAgent, type RunEvent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { collectingLogger } from '../support/logging.js';
import { recordEachTest } from '../support/per-test.js';
import { delegating, router, serveLeaf } from '../remote/helpers.js';

const rec = recordEachTest();

const alnum = (n: number, seed = 7): string => Array.from({ length: n }, (_, i) => 'aB3dE5gH7jK9mN1pQ2sT4vW6yZ8'[(i * seed) % 27]).join('');
const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
const pem = `-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA${alnum(40)}\n${alnum(48, 5)}\n-----END RSA PRIVATE KEY-----`;

/** Each: what the error says, and the part of it that is the secret. */
export const SECRETS: [string, string][] = [
  ['DB_PASSWORD=hunter2hunter2', 'hunter2hunter2'],
  ['DB_PASSWORD=swordfish', 'swordfish'],
  [`STRIPE_SECRET_KEY=rk_live_${alnum(24)}`, alnum(24)],
  ['aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'wJalrXUtnFEMI/K7MDENG'],
  ['MY_API_KEY: 9f8e7d6c5b4a39281706', '9f8e7d6c5b4a39281706'],
  ['x_auth_token=a1b2c3d4e5f6g7h8i9j0', 'a1b2c3d4e5f6g7h8i9j0'],
  ['{"client_secret": "cs-8f7e6d5c4b3a2910"}', 'cs-8f7e6d5c4b3a2910'],
  ['Authorization: Bearer abc123def456ghi789', 'abc123def456ghi789'],
  ['export GITHUB_TOKEN="gt-0a1b2c3d4e5f"', 'gt-0a1b2c3d4e5f'],
  [`sk_live_${alnum(24)}`, alnum(24)],
  [`rk_live_${alnum(24, 11)}`, alnum(24, 11)],
  [`sk_test_${alnum(24, 13)}`, alnum(24, 13)],
  [`pk_live_${alnum(24, 17)}`, alnum(24, 17)],
  ...['ghp', 'gho', 'ghu', 'ghs', 'ghr'].map((p, i): [string, string] => [`${p}_${alnum(36, 5 + 2 * i)}`, alnum(36, 5 + 2 * i)]),
  [`github_pat_11ABCDEFG0_${alnum(59)}`, alnum(59)],
  ...['xoxb', 'xoxp', 'xoxa'].map((p): [string, string] => [`${p}-123456789012-1234567890123-${alnum(24, 19)}`, `1234567890123-${alnum(24, 19)}`]),
  [`xapp-1-A0123456789-1234567890123-${alnum(32)}`, `1234567890123-${alnum(32)}`],
  ['AKIAIOSFODNN7EXAMPLE', 'IOSFODNN7EXAMPLE'],
  ['ASIAY34FZKBOKMUTVV7A', 'Y34FZKBOKMUTVV7A'],
  [`sk-${alnum(48)}`, alnum(48)],
  [`sk-proj-${alnum(48, 5)}`, alnum(48, 5)],
  [`sk-ant-api03-${alnum(40, 11)}`, alnum(40, 11)],
  ['AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI', 'SyDdI0hCZtE6vySjMm'],
  [`glpat-${alnum(20, 13)}`, alnum(20, 13)],
  [jwt, 'dozjgNryP4J3jVmNHl0w5N'],
  [pem, alnum(40)],
];

function leakyTool(said: string) {
  return defineTool({
    name: 'fetch_report',
    description: 'Fetches a report.',
    input: z.object({}),
    execute: () => {
      throw new Error(`upstream refused: ${said} (try again later)`);
    },
  });
}

/** Every text a span carries about a failure: status messages and exception events. */
function spanTexts(): string {
  return JSON.stringify(rec.spans().map((s) => ({ status: s.status, events: s.events.map((e) => e.attributes) })));
}

describe.each(SECRETS)('%s', (said, secret) => {
  it("a tool's thrown error: the model's tool message and the tool's span carry no secret", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: 'fetch_report', arguments: {} }] }, 'done']);
    await new SymfonicAgent({ name: 'reporter', modelProvider: model, tools: [leakyTool(said)] }).run('get the report');
    const toolMessage = model.calls[1]!.messages.at(-1)!.content;
    expect(toolMessage).toContain('upstream refused');
    expect(toolMessage).toContain('[REDACTED]');
    expect(toolMessage).toContain('(try again later)');
    expect(toolMessage).not.toContain(secret);
    expect(spanTexts()).toContain('upstream refused');
    expect(spanTexts()).not.toContain(secret);
  });

  it("a child's failure: the parent's model, every span, the run events and the logged warning carry no secret", async () => {
    const { logger, lines } = collectingLogger('warn');
    const child = new SymfonicAgent({ name: 'fetcher', modelProvider: scriptedModel([new Error(`gateway said: ${said}`)]), logger });
    const model = scriptedModel([{ toolCalls: [{ name: 'run_agent', arguments: { name: 'fetcher', task: 'fetch it' } }] }, 'done']);
    const parent = new SymfonicAgent({ name: 'lead', modelProvider: model, logger, subAgents: [new SubAgent({ name: 'fetcher', agent: child, description: 'Fetches.' })] });
    const events: RunEvent[] = [];
    await parent.run('go', { onEvent: (e) => void events.push(e) });
    const toolMessage = model.calls[1]!.messages.at(-1)!.content;
    expect(toolMessage).toContain('gateway said');
    expect(toolMessage).not.toContain(secret);
    expect(spanTexts()).toContain('gateway said');
    expect(spanTexts()).not.toContain(secret);
    expect(JSON.stringify(events)).not.toContain(secret);
    expect(JSON.stringify(lines)).toContain('gateway said');
    expect(JSON.stringify(lines)).not.toContain(secret);
  });
});

describe("a remote child's failure, over A2A", () => {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  it('every shape at once: neither the caller\'s model nor any span of either side carries one', async () => {
    const said = SECRETS.map(([text]) => text).join('\n');
    const served = await serveLeaf('fetcher', { model: scriptedModel([new Error(`gateway said: ${said}`)]) });
    open.push(served.server);
    const model = delegating('fetcher', 'fetch it', 'done');
    await router({ name: 'fetcher', url: served.server.url, description: 'Fetches.' }, { model }).run('go', { scope: { tenantId: 'acme' } });
    const toolMessage = model.calls[1]!.messages.at(-1)!.content;
    expect(toolMessage).toContain('gateway said');
    expect(spanTexts()).toContain('gateway said');
    for (const [, secret] of SECRETS) {
      expect(toolMessage).not.toContain(secret);
      expect(spanTexts()).not.toContain(secret);
    }
  });
});

describe('what is no secret stays', () => {
  it.each([
    'the token budget of this run is spent; raise maxTokens or try later',
    'max_tokens=4096 is more than the model allows',
    '{"input_tokens": 1200, "output_tokens": 340}',
    'author: Jane Doe, tokenizer: cl100k_base',
    'Set OPENAI_API_KEY in your environment (api_key: YOUR_KEY is a placeholder).',
    'auth: failed; your auth token expired, sign in again',
    'model "gpt-4o-mini" was not found (HTTP 404) at http://localhost:11434/v1',
    'the skeleton task-runner key was missing',
  ])('%s', async (said) => {
    const model = scriptedModel([{ toolCalls: [{ name: 'fetch_report', arguments: {} }] }, 'done']);
    await new SymfonicAgent({ name: 'reporter', modelProvider: model, tools: [leakyTool(said)] }).run('get the report');
    expect(model.calls[1]!.messages.at(-1)!.content).toContain(said);
  });
});

/**
 * Issue 25's findings on error text and names: a tool that throws must not hand a secret to the
 * model (a third party), and a model-chosen child name of any length must not land whole in a
 * span, a status or a message.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, SPAN_ATTRIBUTES, SubAgentSpec, SymfonicAgent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';

const rec = recordEachTest();

/** Each: the text a tool's error carries, and the part of it that is the secret. */
const SECRETS: [string, string, string][] = [
  ['a bearer token', 'Bearer abc123def456ghi789jkl', 'abc123def456ghi789jkl'],
  ['an OpenAI key', 'sk-proj-Zx81LmQ0pR7tUv3WnB5yK2dF', 'Zx81LmQ0pR7tUv3WnB5yK2dF'],
  ['an Anthropic key', 'sk-ant-api03-Qw9Er8Ty7Ui6Op5As4Df3Gh2', 'Qw9Er8Ty7Ui6Op5As4Df3Gh2'],
  ['credentials in a URL', 'postgres://admin:hunter2secret@db.internal:5432/app', 'hunter2secret'],
  ['an x-api-key header', 'x-api-key: k3y-of-no-known-shape-9876', 'k3y-of-no-known-shape-9876'],
  ['an authorization header', 'Authorization: Basic YWRtaW46aHVudGVyMg==', 'YWRtaW46aHVudGVyMg'],
];

describe('a tool that throws hands the model no secret', () => {
  it.each(SECRETS)('%s in the error text is redacted before the model reads it', async (_label, secret, secretPart) => {
    const leaky = defineTool({
      name: 'fetch_report',
      description: 'Fetches a report.',
      input: z.object({}),
      execute: () => {
        throw new Error(`upstream refused: ${secret}`);
      },
    });
    const model = scriptedModel([{ toolCalls: [{ name: 'fetch_report', arguments: {} }] }, 'done']);
    const agent = new SymfonicAgent({ name: 'reporter', modelProvider: model, tools: [leaky] });
    await agent.run('get the report');
    // What the provider would be sent: the whole second request, as its body would carry it.
    const body = JSON.stringify(model.calls[1]);
    expect(body).toContain('upstream refused');
    expect(body).not.toContain(secretPart);
    expect(body).toContain('[REDACTED]');
  });

  it('a tool error of a megabyte reaches the model cut to a few KB, saying so', async () => {
    const huge = defineTool({
      name: 'dump',
      description: 'Dumps.',
      input: z.object({}),
      execute: () => {
        throw new Error('x'.repeat(1 << 20));
      },
    });
    const model = scriptedModel([{ toolCalls: [{ name: 'dump', arguments: {} }] }, 'done']);
    await new SymfonicAgent({ name: 'dumper', modelProvider: model, tools: [huge] }).run('go');
    const toolMessage = model.calls[1]!.messages.at(-1)!.content;
    expect(toolMessage.length).toBeLessThan(5000);
    expect(toolMessage).toMatch(/cut: \d+ characters in all/);
  });
});

describe('a model-chosen child name of any length stays bounded', () => {
  it('100 KB of name: the span attribute, the span status and the tool message stay small', async () => {
    const name = 'n'.repeat(100_000);
    const model = scriptedModel([{ toolCalls: [{ name: 'run_agent', arguments: { name, task: 'do it' } }] }, 'answered myself']);
    const agent = new SymfonicAgent({ name: 'lead', modelProvider: model, subAgents: [new SubAgentSpec({ name: 'helper', description: 'Helps.' })] });
    await agent.run('go');
    const span = rec.spans().find((s) => s.name === 'execute_tool run_agent')!;
    expect(String(span.attributes[SPAN_ATTRIBUTES.delegationChild]).length).toBeLessThanOrEqual(70);
    expect((span.status.message ?? '').length).toBeLessThan(1000);
    expect(model.calls[1]!.messages.at(-1)!.content.length).toBeLessThan(1000);
    expect(span.attributes[SPAN_ATTRIBUTES.delegationOutcome]).toBe('unknown_child');
  });
});

describe('a spec child that drops a tool says so', () => {
  it('names each write-surface tool dropped and how to keep it, at registration', async () => {
    const writer = defineTool({ name: 'write_file', description: 'Writes.', input: z.object({}), writeSurface: true, execute: () => 'ok' });
    const reader = defineTool({ name: 'read_file', description: 'Reads.', input: z.object({}), execute: () => 'ok' });
    const warned = new Promise<Error>((resolve) => {
      const onWarning = (w: Error) => {
        if ((w as Error & { code?: string }).code !== 'SYMFONIC_SPEC_TOOLS_DROPPED') return;
        process.off('warning', onWarning);
        resolve(w);
      };
      process.on('warning', onWarning);
    });
    new SymfonicAgent({
      name: 'lead',
      modelProvider: scriptedModel(['x']),
      subAgents: [new SubAgentSpec({ name: 'editor', description: 'Edits.', tools: [writer, reader] })],
    });
    const w = await warned;
    expect(w.message).toContain('"write_file"');
    expect(w.message).not.toContain('"read_file"');
    expect(w.message).toMatch(/writeSurface: false/);
  });
});

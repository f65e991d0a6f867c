/**
 * Issue 29: `aiSdkModel` took a streamed answer of 314,572,800 characters whole while the HTTP
 * adapters cut at 64 MiB, and a malformed model object raised raw TypeErrors from inside the run
 * (`name.slice is not a function`, a circular input, `doGenerate` resolving undefined). One bound
 * for every provider (`maxStreamBytes`, `maxResponseBytes`, the HTTP adapters' defaults), and a
 * model object and its answers checked, with errors naming the fault.
 */
import { describe, expect, it } from 'vitest';
import { aiSdkModel, ConfigurationError, ModelProviderError, SymfonicAgent, type AiSdkLanguageModel } from '../../src/index.js';

const MIB = 1024 * 1024;
const FINISH = { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } };

/** A v2 model object whose calls answer with what the test gives. */
function modelWith(parts: { generate?: () => unknown; stream?: () => unknown }, fields: Record<string, unknown> = {}): AiSdkLanguageModel {
  return {
    specificationVersion: 'v2',
    provider: 'openai.chat',
    modelId: 'gpt-4o-mini',
    doGenerate: async () => parts.generate?.(),
    doStream: async () => parts.stream?.(),
    ...fields,
  } as unknown as AiSdkLanguageModel;
}

/** A lazy stream of `count` text deltas of 1 MiB each, then a finish part; `pulled` counts what was read. */
function floodStream(count: number) {
  const delta = 'x'.repeat(MIB);
  const state = { pulled: 0, cancelled: false };
  const stream = new ReadableStream({
    pull(controller) {
      if (state.pulled === count) {
        controller.enqueue(FINISH);
        controller.close();
        return;
      }
      state.pulled++;
      controller.enqueue({ type: 'text-delta', id: '0', delta });
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

const run = (model: AiSdkLanguageModel, stream = false) => {
  const agent = new SymfonicAgent({ name: 'a', modelProvider: aiSdkModel(model, { maxRetries: 0 }) });
  return (stream ? agent.stream('go').result : agent.run('go')).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
};

describe('one bound on what any provider sends', () => {
  it('a streamed answer of 300 MiB stops at the 64 MiB default, names maxStreamBytes, and cancels the SDK stream', async () => {
    const flood = floodStream(300);
    const error = await run(modelWith({ stream: () => ({ stream: flood.stream }) }), true);
    expect(error).toBeInstanceOf(ModelProviderError);
    expect(error!.message).toContain('larger than 64 MiB (maxStreamBytes)');
    expect(error!.message).toContain('raise maxStreamBytes in aiSdkModel()');
    expect((error as ModelProviderError).retryable).toBe(false);
    expect(flood.state.pulled).toBeLessThan(70);
    expect(flood.state.cancelled).toBe(true);
  });

  it('maxStreamBytes is the option that moves it', async () => {
    const flood = floodStream(10);
    const provider = aiSdkModel(modelWith({ stream: () => ({ stream: flood.stream }) }), { maxStreamBytes: 4 * MIB });
    const error = await new SymfonicAgent({ name: 'a', modelProvider: provider }).stream('go').result.catch((e: unknown) => e as Error);
    expect((error as Error).message).toContain('larger than 4 MiB (maxStreamBytes)');
    const whole = floodStream(3);
    const fine = aiSdkModel(modelWith({ stream: () => ({ stream: whole.stream }) }), { maxStreamBytes: 4 * MIB });
    expect((await new SymfonicAgent({ name: 'a', modelProvider: fine }).stream('go').result).text.length).toBe(3 * MIB);
  });

  it('a generated answer past 8 MiB (text or tool input) fails naming maxResponseBytes', async () => {
    const text = await run(modelWith({ generate: () => ({ content: [{ type: 'text', text: 'y'.repeat(9 * MIB) }], finishReason: 'stop', usage: {} }) }));
    expect(text!.message).toContain('larger than 8 MiB (maxResponseBytes)');
    const input = { blob: 'z'.repeat(9 * MIB) };
    const tool = await run(modelWith({ generate: () => ({ content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 't', input }], finishReason: 'tool-calls', usage: {} }) }));
    expect(tool!.message).toContain('larger than 8 MiB (maxResponseBytes)');
  });

  it.each([0, -1, 1.5, '64'])('refuses maxStreamBytes %s', (bad) => {
    expect(() => aiSdkModel(modelWith({}), { maxStreamBytes: bad as number })).toThrow(/maxStreamBytes/);
  });
});

describe('a malformed model object or answer gets an error naming the fault, never a TypeError', () => {
  it.each([
    ['a modelId that is no string', { modelId: 42 }, /modelId must be a non-empty string \(it is number\)/],
    ['a provider that is no string', { provider: { name: 'x' } }, /provider must be a non-empty string \(it is object\)/],
    ['no doStream', { doStream: undefined }, /no doGenerate and doStream methods/],
  ])('%s is refused at aiSdkModel()', (_label, fields, message) => {
    const make = () => aiSdkModel(modelWith({}, fields));
    expect(make).toThrow(ConfigurationError);
    expect(make).toThrow(message);
  });

  it('null is refused at aiSdkModel()', () => {
    expect(() => aiSdkModel(null as unknown as AiSdkLanguageModel)).toThrow(ConfigurationError);
  });

  const circular: Record<string, unknown> = { a: 1 };
  circular.self = circular;
  it.each([
    ['doGenerate resolving undefined', { generate: () => undefined }, /doGenerate resolved undefined/],
    ['a result without content', { generate: () => ({ finishReason: 'stop' }) }, /no content array/],
    ['a tool call named 42', { generate: () => ({ content: [{ type: 'tool-call', toolCallId: 'c', toolName: 42, input: '{}' }], finishReason: 'tool-calls', usage: {} }) }, /toolName is number, not a string/],
    ['a circular tool input', { generate: () => ({ content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't', input: circular }], finishReason: 'tool-calls', usage: {} }) }, /input cannot be written as JSON/],
    ['a text part whose text is no string', { generate: () => ({ content: [{ type: 'text', text: { x: 1 } }], finishReason: 'stop', usage: {} }) }, /text part whose text is object/],
    ['a null part', { generate: () => ({ content: [null], finishReason: 'stop', usage: {} }) }, /a part that is null/],
  ])('%s fails the run with a ModelProviderError naming it', async (_label, parts, message) => {
    const error = await run(modelWith(parts));
    expect(error).toBeInstanceOf(ModelProviderError);
    expect(error!.message).toMatch(message);
    expect(error!.message).toContain('Check the model object given to aiSdkModel()');
  });

  it.each([
    ['doStream resolving undefined', () => undefined, /doStream resolved undefined/],
    ['a stream part that is null', () => ({ stream: new ReadableStream({ start: (c) => (c.enqueue(null), c.close()) }) }), /a part that is null/],
    ['a streamed tool call named 42', () => ({ stream: new ReadableStream({ start: (c) => (c.enqueue({ type: 'tool-call', toolCallId: 'c', toolName: 42, input: '{}' }), c.enqueue(FINISH), c.close()) }) }), /toolName is number/],
  ])('%s fails the streamed run with a ModelProviderError naming it', async (_label, stream, message) => {
    const error = await run(modelWith({ stream }), true);
    expect(error).toBeInstanceOf(ModelProviderError);
    expect(error!.message).toMatch(message);
  });
});

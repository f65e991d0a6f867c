import { describe, expect, it } from 'vitest';
import { ConfigurationError, FrameworkConfig, type FrameworkConfigInput } from '../../src/index.js';
import { caughtSync } from './helpers.js';

function refusal(input: unknown): ConfigurationError {
  const error = caughtSync(() => new FrameworkConfig(input as FrameworkConfigInput));
  expect(error).toBeInstanceOf(ConfigurationError);
  return error as ConfigurationError;
}

/** A parent with every flag away from its default, so inheritance cannot pass by coincidence. */
const parent = new FrameworkConfig({
  agent: { maxAgentDepth: 4, maxTurns: 7, askUserEnabled: true, childTimeoutMs: 5_000, maxConcurrentDelegations: 3 },
  model: { modelName: 'parent-model', temperature: 0.5, maxTokens: 900 },
  captureContent: true,
});

describe('FrameworkConfig defaults', () => {
  it('defaults maxAgentDepth to 2, maxTurns to 10 and captureContent to false', () => {
    const config = new FrameworkConfig();
    expect(config.agent.maxAgentDepth).toBe(2);
    expect(config.agent.maxTurns).toBe(10);
    expect(config.captureContent).toBe(false);
    expect(config.agent.askUserEnabled).toBe(false);
    expect(config.agent.childTimeoutMs).toBeUndefined();
    expect(config.model).toEqual({});
    expect(config.name).toBeUndefined();
  });

  it('fills defaults around what is given', () => {
    const config = new FrameworkConfig({ agent: { maxTurns: 4 }, model: { temperature: 0 } });
    expect(config.agent.maxTurns).toBe(4);
    expect(config.agent.maxAgentDepth).toBe(2);
    expect(config.model).toEqual({ temperature: 0 });
    expect(config.captureContent).toBe(false);
    expect(new FrameworkConfig({}).toJSON()).toEqual(new FrameworkConfig().toJSON());
  });

  it('round-trips through toJSON', () => {
    expect(new FrameworkConfig(parent.toJSON()).toJSON()).toEqual(parent.toJSON());
  });
});

describe('FrameworkConfig refusals', () => {
  it.each([
    ['an unknown top-level key', { maxTurns: 5 }, 'maxTurns'],
    ['a misspelt agent key', { agent: { maxTurn: 5 } }, 'maxTurn'],
    ['an unknown model key', { model: { temp: 0.2 } }, 'temp'],
  ])('refuses %s, naming it', (_label, input, key) => {
    const error = refusal(input);
    expect(error.message).toMatch(/invalid FrameworkConfig/);
    expect(error.message).toContain(`"${key}"`);
    // The fix: what is allowed.
    expect(error.message).toMatch(/Allowed: \{ agent: \{ maxAgentDepth, maxTurns/);
  });

  it.each([
    ['maxTurns 0', { agent: { maxTurns: 0 } }, 'agent.maxTurns'],
    ['a fractional maxTurns', { agent: { maxTurns: 2.5 } }, 'agent.maxTurns'],
    ['a negative maxAgentDepth', { agent: { maxAgentDepth: -1 } }, 'agent.maxAgentDepth'],
    ['a string maxAgentDepth', { agent: { maxAgentDepth: '2' } }, 'agent.maxAgentDepth'],
    ['a zero childTimeoutMs', { agent: { childTimeoutMs: 0 } }, 'agent.childTimeoutMs'],
    ['a temperature above 2', { model: { temperature: 5 } }, 'model.temperature'],
    ['maxTokens 0', { model: { maxTokens: 0 } }, 'model.maxTokens'],
    ['an empty modelName', { model: { modelName: '' } }, 'model.modelName'],
    ['a non-boolean captureContent', { captureContent: 'yes' }, 'captureContent'],
    ['a non-object agent section', { agent: 3 }, 'agent'],
  ])('refuses %s, naming the field', (_label, input, path) => {
    // The path as zod reports it, not merely the word, which the list of allowed keys also holds.
    expect(refusal(input).message).toContain(`→ at ${path}`);
  });

  it('refuses input that is not an object', () => {
    refusal('maxTurns=5');
    refusal(42);
  });
});

describe('FrameworkConfig is frozen', () => {
  it('refuses every change to the config and its sections', () => {
    const config = new FrameworkConfig({ agent: { maxTurns: 5 }, model: { modelName: 'm' } });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.agent)).toBe(true);
    expect(Object.isFrozen(config.model)).toBe(true);
    const w = config as unknown as { captureContent: boolean; agent: Record<string, unknown>; model: Record<string, unknown> };
    expect(() => {
      w.captureContent = true;
    }).toThrow(TypeError);
    expect(() => {
      w.agent.maxTurns = 500;
    }).toThrow(TypeError);
    expect(() => {
      w.model.modelName = 'other';
    }).toThrow(TypeError);
    expect(() => {
      w.agent = {};
    }).toThrow(TypeError);
    expect(config.agent.maxTurns).toBe(5);
  });

  it('is not changed by later edits to the input it was built from', () => {
    const input = { agent: { maxTurns: 5 }, model: { modelName: 'm' } };
    const config = new FrameworkConfig(input);
    input.agent.maxTurns = 99;
    input.model.modelName = 'changed';
    expect(config.agent.maxTurns).toBe(5);
    expect(config.model.modelName).toBe('m');
  });
});

describe('FrameworkConfig.child', () => {
  it('inherits every flag of the parent and records the child name', () => {
    const child = FrameworkConfig.child(parent, { name: 'researcher' });
    expect(child).toBeInstanceOf(FrameworkConfig);
    expect(child.toJSON()).toEqual(parent.toJSON());
    expect(child.name).toBe('researcher');
    expect(Object.isFrozen(child)).toBe(true);
    expect(Object.isFrozen(child.agent)).toBe(true);
  });

  it('applies overrides over the inherited flags and keeps the rest', () => {
    const child = FrameworkConfig.child(parent, {
      name: 'writer',
      modelName: 'child-model',
      temperature: 0.1,
      agent: { maxTurns: 2 },
    });
    expect(child.model).toEqual({ modelName: 'child-model', temperature: 0.1, maxTokens: 900 });
    expect(child.agent).toEqual({ ...parent.agent, maxTurns: 2 });
    expect(child.captureContent).toBe(true);

    const other = FrameworkConfig.child(parent, { name: 'quiet', maxTokens: 50, captureContent: false });
    expect(other.model).toEqual({ modelName: 'parent-model', temperature: 0.5, maxTokens: 50 });
    expect(other.captureContent).toBe(false);
    expect(other.agent).toEqual(parent.agent);
  });

  it('leaves the parent as it was', () => {
    const before = parent.toJSON();
    FrameworkConfig.child(parent, { name: 'x', modelName: 'y', agent: { maxTurns: 1 }, captureContent: false });
    expect(parent.toJSON()).toEqual(before);
  });

  it('inherits from a default parent too: a child of defaults is defaults', () => {
    const child = FrameworkConfig.child(new FrameworkConfig(), { name: 'c' });
    expect(child.toJSON()).toEqual(new FrameworkConfig().toJSON());
  });

  it('refuses unknown overrides, naming them', () => {
    const error = caughtSync(() =>
      FrameworkConfig.child(parent, { name: 'c', maxTurns: 3, instructions: 'x' } as unknown as Parameters<typeof FrameworkConfig.child>[1]),
    );
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toContain('"maxTurns"');
    expect(error.message).toContain('"instructions"');
    expect(error.message).toMatch(/Allowed: name, modelName/);
  });

  it('refuses bad override values, naming the field', () => {
    const error = caughtSync(() => FrameworkConfig.child(parent, { name: 'c', temperature: 9 }));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toContain('→ at model.temperature');
    const agentError = caughtSync(() => FrameworkConfig.child(parent, { name: 'c', agent: { maxTurns: 0 } }));
    expect(agentError).toBeInstanceOf(ConfigurationError);
    expect(agentError.message).toContain('→ at agent.maxTurns');
  });

  it('refuses a missing name or a parent that is not a FrameworkConfig', () => {
    expect(() => FrameworkConfig.child(parent, {} as never)).toThrow(ConfigurationError);
    expect(() => FrameworkConfig.child(parent, { name: '' })).toThrow(ConfigurationError);
    expect(() => FrameworkConfig.child(parent.toJSON() as never, { name: 'c' })).toThrow(ConfigurationError);
  });
});

import { testFrame } from '../support/frames.js';
import { describe, expect, it } from 'vitest';
import {
  AbortError,
  BudgetExceededError,
  ConfigurationError,
  DelegationRoster,
  DuplicateChildError,
  DuplicateRunError,
  EmptyModelResponseError,
  MaxTurnsExceededError,
  MetricsCollector,
  ModelProviderError,
  OutputValidationError,
  SymfonicError,
  UnknownChildError,
} from '../../src/index.js';
import { makeScope } from '../../src/core/scope.js';
import { newRunId } from '../../src/run/ids.js';
import { LineageError, ScriptError } from '../../src/testing/index.js';
import { addUsage, addUsageInto, type Usage } from '../../src/core/usage.js';
import { caught, caughtSync, RUN_ID } from './helpers.js';

describe('newRunId', () => {
  it('mints 32 lowercase hex characters', () => {
    for (let i = 0; i < 600; i++) expect(newRunId()).toMatch(RUN_ID);
  });

  it('never repeats across 10 000 ids (which spans many refills of its pool)', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 10_000; i++) ids.add(newRunId());
    expect(ids.size).toBe(10_000);
  });
});

describe('makeScope', () => {
  it('keeps the fields it is given and nothing else', () => {
    const scope = makeScope({ tenantId: 'acme', userId: 'u-1', attributes: { region: 'eu' } });
    expect(scope).toEqual({ tenantId: 'acme', userId: 'u-1', attributes: { region: 'eu' } });
    expect(makeScope({ tenantId: 'acme' })).toEqual({ tenantId: 'acme' });
    expect(Object.keys(makeScope({ tenantId: 'acme' }))).toEqual(['tenantId']);
  });

  it('returns a deeply frozen copy that no mutation gets through (ESM runs in strict mode)', () => {
    const input = { tenantId: 'acme', userId: 'u-1', attributes: { region: 'eu' } };
    const scope = makeScope(input);
    expect(Object.isFrozen(scope)).toBe(true);
    expect(Object.isFrozen(scope.attributes)).toBe(true);

    const writable = scope as { tenantId: string; userId?: string; attributes?: Record<string, string>; extra?: string };
    expect(() => {
      writable.tenantId = 'evil';
    }).toThrow(TypeError);
    expect(() => {
      delete writable.userId;
    }).toThrow(TypeError);
    expect(() => {
      writable.extra = 'x';
    }).toThrow(TypeError);
    expect(() => {
      writable.attributes!.region = 'us';
    }).toThrow(TypeError);
    expect(() => {
      writable.attributes!.added = 'x';
    }).toThrow(TypeError);

    // A copy: the caller's object stays theirs, and changing it later does not reach the scope.
    expect(scope).not.toBe(input);
    expect(scope.attributes).not.toBe(input.attributes);
    input.tenantId = 'other';
    input.attributes.region = 'us';
    expect(scope).toEqual({ tenantId: 'acme', userId: 'u-1', attributes: { region: 'eu' } });
  });

  it('returns a scope it already made as it is', () => {
    const scope = makeScope({ tenantId: 'acme' });
    expect(makeScope(scope)).toBe(scope);
  });

  it.each([
    ['no tenantId', {}, 'tenantId'],
    ['an empty tenantId', { tenantId: '' }, 'tenantId'],
    ['a numeric tenantId', { tenantId: 42 }, 'tenantId'],
    ['a non-string userId', { tenantId: 'acme', userId: 7 }, 'userId'],
    ['a non-string attribute value', { tenantId: 'acme', attributes: { region: 1 } }, 'attributes'],
    ['an unknown key', { tenantId: 'acme', tenant: 'x' }, 'tenant"'],
  ])('refuses %s with a ConfigurationError naming the field', (_label, input, field) => {
    const error = caughtSync(() => makeScope(input));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toContain(field);
    expect(error.message).toContain('tenantId: string');
  });

  it.each([null, undefined, 'acme', 3])('refuses %s as a whole', (input) => {
    expect(() => makeScope(input)).toThrow(ConfigurationError);
  });
});

describe('Usage arithmetic', () => {
  const u = (inputTokens: number, outputTokens: number, source: Usage['source'] = 'reported', cache?: number): Usage => ({
    inputTokens,
    outputTokens,
    source,
    ...(cache !== undefined ? { cacheReadInputTokens: cache } : {}),
  });

  it('adds tokens field by field into a new value, leaving both operands alone', () => {
    const a = u(10, 3);
    const b = u(5, 7);
    const sum = addUsage(a, b);
    expect(sum).toEqual({ inputTokens: 15, outputTokens: 10, source: 'reported' });
    expect(sum).not.toBe(a);
    expect(a).toEqual(u(10, 3));
    expect(b).toEqual(u(5, 7));
  });

  it('marks a sum estimated when either side is estimated, and reported only when both are', () => {
    expect(addUsage(u(1, 1, 'reported'), u(1, 1, 'reported')).source).toBe('reported');
    expect(addUsage(u(1, 1, 'estimated'), u(1, 1, 'reported')).source).toBe('estimated');
    expect(addUsage(u(1, 1, 'reported'), u(1, 1, 'estimated')).source).toBe('estimated');
    expect(addUsage(u(1, 1, 'estimated'), u(1, 1, 'estimated')).source).toBe('estimated');
  });

  it('adds cached input when either side has it, and leaves it out when neither does', () => {
    expect(addUsage(u(100, 1, 'reported', 40), u(50, 1, 'reported', 10)).cacheReadInputTokens).toBe(50);
    expect(addUsage(u(100, 1, 'reported', 40), u(50, 1)).cacheReadInputTokens).toBe(40);
    expect(addUsage(u(100, 1), u(50, 1, 'reported', 10)).cacheReadInputTokens).toBe(10);
    expect('cacheReadInputTokens' in addUsage(u(1, 1), u(1, 1))).toBe(false);
  });

  it('addUsageInto agrees with addUsage, provenance included', () => {
    const into = u(10, 3, 'reported', 2);
    addUsageInto(into, u(5, 7, 'estimated'));
    expect(into).toEqual(addUsage(u(10, 3, 'reported', 2), u(5, 7, 'estimated')));
    expect(into.source).toBe('estimated');
    // Once estimated, a reported addition must not launder the sum back to 'reported'.
    addUsageInto(into, u(1, 1, 'reported'));
    expect(into.source).toBe('estimated');
  });
});

describe('errors', () => {
  const child = { run: async () => ({ finalResponse: 'ok' }) };

  /** Each error as the runtime really raises it, with what its message must name: the problem, and a fix. */
  const cases: { error: () => Promise<Error>; type: new (...args: never[]) => Error; problem: RegExp[]; fix: RegExp }[] = [
    {
      type: ConfigurationError,
      error: () => caught(() => makeScope({ tenantId: '' })),
      problem: [/invalid scope/, /tenantId/],
      fix: /Pass \{ tenantId: string/,
    },
    {
      type: DuplicateChildError,
      error: () =>
        caught(
          () =>
            new DelegationRoster([
              { name: 'researcher', description: 'a', agent: child },
              { name: 'researcher', description: 'b', agent: child },
            ]),
        ),
      problem: [/two sub-agents are named "researcher"/],
      fix: /give each child a unique name/,
    },
    {
      type: UnknownChildError,
      error: () => caught(() => new DelegationRoster([{ name: 'researcher', description: 'a', agent: child }]).run('writer', 'task')),
      problem: [/no sub-agent is named "writer"/, /Available: "researcher"/],
      fix: /Call run_agent with one of those names/,
    },
    {
      type: BudgetExceededError,
      error: async () => new BudgetExceededError({ tenantId: 'acme', limitName: 'maxTokens', limit: 1000, spent: 900, reserved: 50, requested: 200 }),
      problem: [/tenant "acme" is over budget/, /the tenant's maxTokens limit \(TenantBudgets\) is 1000 tokens/, /900 tokens spent/, /50 tokens reserved/, /200 tokens/],
      fix: /Lower the per-call FrameworkConfig model\.maxTokens \(the output reserved per call\), raise the tenant's maxTokens limit, or wait/,
    },
    {
      type: MaxTurnsExceededError,
      error: async () => new MaxTurnsExceededError('planner', 4),
      problem: [/agent "planner" made 4 model calls without a final answer/],
      fix: /Raise FrameworkConfig agent\.maxTurns/,
    },
    {
      type: DuplicateRunError,
      error: () =>
        caught(() => {
          const collector = new MetricsCollector();
          collector.open(testFrame({ runId: 'run-1' }), 'a');
          collector.open(testFrame({ runId: 'run-1' }), 'a');
        }),
      problem: [/run id "run-1" is already open/],
      fix: /pass a fresh runId or none/,
    },
  ];

  it.each(cases.map((c) => [c.type.name, c] as const))('%s extends SymfonicError and names the problem and a fix', async (name, c) => {
    const error = await c.error();
    expect(error).toBeInstanceOf(c.type);
    expect(error).toBeInstanceOf(SymfonicError);
    expect(error.name).toBe(name);
    for (const p of c.problem) expect(error.message).toMatch(p);
    expect(error.message).toMatch(c.fix);
  });

  it('AbortError is a SymfonicError named like the platform one, so name checks written for fetch work', () => {
    const error = new AbortError();
    expect(error).toBeInstanceOf(SymfonicError);
    expect(error.name).toBe('AbortError');
    expect(error.message).toMatch(/aborted/);
  });

  it.each([
    ['ConfigurationError', () => new ConfigurationError('x')],
    ['DuplicateChildError', () => new DuplicateChildError('a')],
    ['UnknownChildError', () => new UnknownChildError('a', [])],
    ['EmptyModelResponseError', () => new EmptyModelResponseError('x')],
    ['OutputValidationError', () => new OutputValidationError('x', 'text')],
    ['ScriptError', () => new ScriptError('x')],
    ['ModelProviderError', () => new ModelProviderError('x', { status: 500, provider: 'p', retryable: true })],
    ['LineageError', () => new LineageError([])],
  ])('%s extends SymfonicError and carries its own name', (name, make) => {
    const error = make();
    expect(error).toBeInstanceOf(SymfonicError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
  });

  it('a DuplicateChildError is also a ConfigurationError, since it is a registration refusal', () => {
    expect(new DuplicateChildError('a')).toBeInstanceOf(ConfigurationError);
  });

  it('UnknownChildError says so when no child exists at all', () => {
    expect(new UnknownChildError('writer', []).message).toContain('(none)');
  });
});

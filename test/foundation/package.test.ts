/**
 * The package as a user installs it: the built dist/ reached through package.json `exports` from
 * a project outside this repository, so a broken exports map, a missing build output or a source
 * file that only works under vitest's transform fails here and not on a user's machine.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distStaleness } from '../support/dist.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string;
  type: string;
  main: string;
  types: string;
  engines: { node: string };
  files: string[];
  exports: Record<string, string | Record<string, string>>;
};

let project: string;

beforeAll(() => {
  // The global setup built dist/ if src/ had moved on; the consumer below must see current code.
  expect(distStaleness()).toBeNull();

  // A consumer outside the repository: its own package.json, symfonic linked in as an install would.
  project = mkdtempSync(join(tmpdir(), 'symfonic-consumer-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(root, join(project, 'node_modules', 'symfonic'), 'dir');
}, 180_000);

afterAll(() => {
  if (!project) return;
  // Unlink first, so removing the project can never reach through the link into the repository.
  unlinkSync(join(project, 'node_modules', 'symfonic'));
  rmSync(project, { recursive: true, force: true });
});

/** Runs an ES module snippet in the consumer project and returns the JSON it prints. */
function runInConsumer(source: string): Record<string, unknown> {
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', source], { cwd: project, encoding: 'utf8', timeout: 30_000 });
  if (result.status !== 0) throw new Error(`node exited with ${String(result.status)}:\n${result.stderr}`);
  const last = result.stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as Record<string, unknown>;
}

describe('package.json', () => {
  it('is an ES module package named symfonic for Node >= 20.6', () => {
    expect(pkg.name).toBe('symfonic');
    expect(pkg.type).toBe('module');
    expect(pkg.engines.node).toBe('>=20.6');
    expect(pkg.files).toContain('dist');
  });

  it('points types and main at the built entry point, and both exist', () => {
    expect(pkg.types).toBe('./dist/index.d.ts');
    expect(pkg.main).toBe('./dist/index.js');
    expect(existsSync(join(root, pkg.types))).toBe(true);
    expect(existsSync(join(root, pkg.main))).toBe(true);
  });

  it.each([
    ['.', 'index'],
    ['./testing', 'testing/index'],
    ['./telemetry', 'telemetry/index'],
    ['./durable', 'durable/index'],
  ])('exports %s with types first, then import, both built', (subpath, file) => {
    const entry = pkg.exports[subpath];
    expect(entry).toEqual({ types: `./dist/${file}.d.ts`, import: `./dist/${file}.js` });
    // TypeScript takes the first matching condition, so `types` must precede `import`.
    expect(Object.keys(entry as object)[0]).toBe('types');
    expect(existsSync(join(root, 'dist', `${file}.d.ts`))).toBe(true);
    expect(existsSync(join(root, 'dist', `${file}.js`))).toBe(true);
  });

  it('exports nothing but the four entry points and package.json', () => {
    expect(Object.keys(pkg.exports).sort()).toEqual(['.', './durable', './package.json', './telemetry', './testing']);
  });
});

describe('the packed file list', () => {
  /** What `npm pack` would put in the tarball, read from npm itself. */
  const packed = () => {
    const result = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    if (result.status !== 0) throw new Error(`npm pack --dry-run failed:\n${result.stderr}`);
    return new Set((JSON.parse(result.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path));
  };

  it('has no source map or declaration map, and no file pointing at a map or a source it lacks', () => {
    const files = packed();
    expect([...files].filter((f) => f.endsWith('.map'))).toEqual([]);
    const dangling: string[] = [];
    for (const file of files) {
      if (!/\.(js|d\.ts)$/.test(file)) continue;
      for (const [, ref] of readFileSync(join(root, file), 'utf8').matchAll(/\/\/# sourceMappingURL=(\S+)/g)) {
        const target = join(dirname(file), ref!);
        if (!files.has(target)) dangling.push(`${file} -> ${target}`);
      }
    }
    expect(dangling).toEqual([]);
    // The entry points and the command line are in it.
    for (const f of ['dist/index.js', 'dist/index.d.ts', 'dist/testing/index.d.ts', 'dist/telemetry/index.d.ts', 'dist/cli/main.js', 'package.json']) {
      expect(files.has(f), f).toBe(true);
    }
  }, 60_000);
});

describe('the built package, imported by a consumer', () => {
  it('loads all three entry points with their key exports, and runs an agent from dist', () => {
    const out = runInConsumer(`
      const main = await import('symfonic');
      const testing = await import('symfonic/testing');
      const telemetry = await import('symfonic/telemetry');
      const kinds = (m) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v]));
      const rec = testing.recordTelemetry();
      const model = testing.scriptedModel(['built and running']);
      const response = await new main.SymfonicAgent({ name: 'smoke', modelProvider: model }).run('hi');
      const spans = rec.spans().map((s) => s.name);
      rec.assertLineage();
      await rec.shutdown();
      let deep;
      try { await import('symfonic/dist/core/ids.js'); deep = 'importable'; } catch (e) { deep = e.code; }
      console.log(JSON.stringify({
        main: kinds(main), testing: kinds(testing), telemetry: kinds(telemetry),
        finalResponse: response.finalResponse, runId: response.runId, spans, deep,
        scriptError: new testing.ScriptError('x') instanceof main.SymfonicError,
      }));
    `);
    expect(out.main).toMatchObject({
      SymfonicAgent: 'function',
      Agent: 'function',
      FrameworkConfig: 'function',
      defineTool: 'function',
      MetricsCollector: 'function',
      TenantBudgets: 'function',
      SubAgent: 'function',
      SubAgentSpec: 'function',
      FacadeChild: 'function',
      DelegationRoster: 'function',
      openAICompatible: 'function',
      anthropic: 'function',
      priceTable: 'function',
      defaultPrices: 'function',
      SymfonicError: 'function',
      ConfigurationError: 'function',
      DuplicateChildError: 'function',
      UnknownChildError: 'function',
      BudgetExceededError: 'function',
      MaxTurnsExceededError: 'function',
    });
    // Internals stay internal: the public surface is the contract.
    for (const name of ['makeScope', 'newRunId', 'ChildLifecycle', 'costOf', 'defaultMetricsCollector']) expect((out.main as Record<string, unknown>)[name]).toBeUndefined();
    expect(out.testing).toMatchObject({
      scriptedModel: 'function',
      recordTelemetry: 'function',
      assertLineage: 'function',
      delegationTree: 'function',
    });
    expect(out.telemetry).toMatchObject({ startTelemetry: 'function' });
    expect(out.finalResponse).toBe('built and running');
    expect(out.runId).toMatch(/^[0-9a-f]{32}$/);
    expect(out.spans).toEqual(['chat scripted-model', 'invoke_agent smoke']);
    // One copy of the error classes across entry points, or instanceof would fail across them.
    expect(out.scriptError).toBe(true);
    // Internals stay internal: only the exports map is reachable.
    expect(out.deep).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });

  // Type-checking a consumer against the published declarations (NodeNext resolution through
  // the exports' types) is test/foundation/strict-consumer's: the packed tarball installed, under
  // stricter settings than this file's tsc had (no skipLibCheck, no @types/node), in one tsc.
});

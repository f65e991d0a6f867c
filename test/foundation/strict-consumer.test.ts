/**
 * The published package as a new user meets it: `npm pack`, the tarball installed offline into a
 * scratch project with nothing else (no @types/node) but the MCP SDK a user brings for mcpTools,
 * and a strict example compiled by `tsc --strict --exactOptionalPropertyTypes --module nodenext`
 * without skipLibCheck. A declaration that drags in a dependency's Node-only types (pino's Logger
 * did), or an optional property that a real value with `undefined` in it cannot fill, fails here,
 * not on a user's machine. The packed manifest has no install-time script and the tarball its
 * licence.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distStaleness } from '../support/dist.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dev?: boolean;
  devOptional?: boolean;
  link?: boolean;
  [key: string]: unknown;
}

let dir: string;
let project: string;

function run(command: string, args: string[], cwd: string) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 120_000 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${String(result.status)}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/**
 * A lockfile for the scratch project made from this repository's: the packages symfonic needs at
 * run time, at the versions `npm ci` put in npm's cache, so `npm ci --offline` installs them
 * without a network. The repository's lockfile may omit registry URLs
 * (omit-lockfile-registry-resolved); the default registry's tarball URL is filled in, and npm
 * finds the tarball in its cache by integrity.
 */
/** The lockfile path a package at `from` resolves `name` to, as Node looks it up (nearest node_modules first). */
function resolveIn(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = `${base}${base === '' ? '' : '/'}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (base === '') return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

/** `path` and every package it needs to run, by the lockfile's dependencies. */
function closure(packages: Record<string, LockEntry>, path: string): string[] {
  const seen = new Set<string>();
  const todo = [path];
  while (todo.length > 0) {
    const at = todo.pop()!;
    if (seen.has(at)) continue;
    seen.add(at);
    for (const dep of Object.keys((packages[at]?.['dependencies'] as Record<string, string> | undefined) ?? {})) {
      const found = resolveIn(packages, at, dep);
      if (found) todo.push(found);
    }
  }
  return [...seen];
}

/** The MCP SDK a user brings for mcpTools (an optional peer; here a devDependency, so in npm's cache). */
const MCP_SDK = 'node_modules/@modelcontextprotocol/sdk';

function scratchLock(tarball: string): object {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const root = lock.packages[''] as LockEntry & { dependencies: Record<string, string> };
  const integrity = `sha512-${createHash('sha512').update(readFileSync(join(dir, tarball))).digest('base64')}`;
  const packages: Record<string, LockEntry> = {
    '': { name: 'consumer', dependencies: { symfonic: `file:../${tarball}`, '@modelcontextprotocol/sdk': lock.packages[MCP_SDK]!.version! } },
    'node_modules/symfonic': {
      version: root['version'] as string,
      resolved: `file:../${tarball}`,
      integrity,
      dependencies: root.dependencies,
      ...(root['peerDependencies'] ? { peerDependencies: root['peerDependencies'] } : {}),
      ...(root['peerDependenciesMeta'] ? { peerDependenciesMeta: root['peerDependenciesMeta'] } : {}),
    },
  };
  const mcp = new Set(closure(lock.packages, MCP_SDK));
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.link || ((entry.dev || entry.devOptional) && !mcp.has(path))) continue;
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const resolved = entry.resolved ?? `https://registry.npmjs.org/${name}/-/${name.split('/').pop()}-${entry.version}.tgz`;
    const { dev: _dev, devOptional: _devOptional, ...kept } = entry;
    packages[path] = { ...kept, resolved };
  }
  return { name: 'consumer', lockfileVersion: 3, requires: true, packages };
}

beforeAll(() => {
  expect(distStaleness()).toBeNull();
  dir = mkdtempSync(join(tmpdir(), 'symfonic-strict-'));
  // --ignore-scripts: no script may rebuild dist/ under the other test files reading it (the
  // package has none at pack or install time; the test below checks the packed manifest).
  const packed = JSON.parse(run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], ROOT)) as { filename: string }[];
  const tarball = packed[0]!.filename;
  project = join(dir, 'consumer');
  mkdirSync(project);
  const mcpVersion = (JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> }).packages[MCP_SDK]!.version!;
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies: { symfonic: `file:../${tarball}`, '@modelcontextprotocol/sdk': mcpVersion } }),
  );
  writeFileSync(join(project, 'package-lock.json'), JSON.stringify(scratchLock(tarball), null, 2));
  run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], project);
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const EXAMPLE = `import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  BudgetExceededError, FrameworkConfig, MetricsCollector, RedisBudgetStore, SubAgentSpec, SymfonicAgent, TenantBudgets, defineTool,
  liveTree, mcpTools, priceTable, renderRunEvents, type AgentResponse, type Logger, type RunTreeNode, type Tool, type ToolContext, type Usage,
} from 'symfonic';
import { recordTelemetry, scriptedModel, type RunNode } from 'symfonic/testing';
import { startTelemetry } from 'symfonic/telemetry';

const weather: Tool<{ city: string }> = defineTool({
  name: 'weather',
  description: 'Current weather for a city.',
  input: z.object({ city: z.string() }),
  execute: async ({ city }: { city: string }, ctx: ToolContext) => {
    const log: Logger = ctx.logger;
    log.info({ city }, 'looking up');
    return { city, tempC: 21 };
  },
});

const collector = new MetricsCollector({
  prices: priceTable({ small: { inputPerMTok: 0.25, outputPerMTok: 1.25 } }),
  budgets: new TenantBudgets({ limits: { acme: { maxCostUsd: 1 } } }),
});
const agent = new SymfonicAgent({
  name: 'assistant',
  modelProvider: scriptedModel(['Sunny.'], { modelName: 'small' }),
  tools: [weather],
  metricsCollector: collector,
  config: new FrameworkConfig({ agent: { maxTurns: 3 }, model: { maxTokens: 256 } }),
  subAgents: [new SubAgentSpec({ name: 'helper', description: 'Helps.', modelName: 'small' })],
});

export async function main(): Promise<string> {
  const telemetry = startTelemetry({ serviceName: 'consumer' });
  const rec = recordTelemetry();
  try {
    const reply: AgentResponse = await agent.run('Weather in Oslo?', { scope: { tenantId: 'acme' } });
    const usage: Usage = reply.totalUsage;
    const cost: number | null = reply.totalCostUsd;
    const tree: RunNode | undefined = rec.tree(reply.runId);
    return \`\${reply.finalResponse} \${usage.inputTokens} \${cost ?? 'unpriced'} \${tree?.agent ?? ''} \${rec.spans().length}\`;
  } catch (e) {
    if (e instanceof BudgetExceededError) return \`\${e.tenantId} over \${e.limitName}: \${e.limit}\`;
    throw e;
  } finally {
    await rec.shutdown();
    await telemetry.shutdown();
    await agent.close();
  }
}

// The tools of a real MCP client, a Redis store, and the live tree over a stream.
export async function withMcp(client: Client): Promise<number> {
  const tools = await mcpTools(client, { prefix: 'docs_' });
  return tools.length;
}
export const store = new RedisBudgetStore({ redis: 'redis://127.0.0.1:6379/0', keyPrefix: 'app:' });
export const budgets = new TenantBudgets({ store, limits: { acme: { maxCostUsd: 5 } } });
export async function drawn(): Promise<RunTreeNode | undefined> {
  const onEvent = liveTree({ width: 100 });
  await agent.run('q', { onEvent });
  onEvent.close();
  return renderRunEvents(agent.stream('q'), { write: (text) => void text, live: false });
}

// What test/foundation/package.test.ts compiled on its own before: the handles and types of each entry.
export const handle: { shutdown(): Promise<void> } = startTelemetry({ serviceName: 's' });
export const nodes: RunNode[] = recordTelemetry().tree();
export const literal: Usage = { inputTokens: 1, outputTokens: 2, source: 'reported' };
export const pending: Promise<AgentResponse> = agent.run('q', { scope: { tenantId: 't' } });

// The declarations are real types, not any: each line below must be an error.
// @ts-expect-error unknown option
new SymfonicAgent({ name: 'a', modelProvider: scriptedModel(['x']), nope: 1 });
// @ts-expect-error finalResponse is a string
export const wrong: number = (await agent.run('q')).finalResponse;
`;

describe('the packed package in a fresh strict TypeScript project', () => {
  it('installs offline with nothing but its own dependencies: no @types/node', () => {
    expect(existsSync(join(project, 'node_modules', 'symfonic', 'dist', 'index.d.ts'))).toBe(true);
    expect(existsSync(join(project, 'node_modules', '@types'))).toBe(false);
    expect(existsSync(join(project, 'node_modules', 'typescript'))).toBe(false);
  });

  it('publishes no install-time script, and the licence', () => {
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules', 'symfonic', 'package.json'), 'utf8')) as { scripts?: Record<string, string>; license: string };
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare', 'prepublish']) expect(manifest.scripts?.[hook], hook).toBeUndefined();
    expect(manifest.license).toBe('MIT');
    expect(readFileSync(join(project, 'node_modules', 'symfonic', 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) 2026 symfonic contributors\n/);
  });

  it('compiles a strict example using the main, testing and telemetry entries, a real MCP client (tsc --strict --exactOptionalPropertyTypes --module nodenext, no skipLibCheck)', () => {
    writeFileSync(join(project, 'example.ts'), EXAMPLE);
    const result = spawnSync(
      process.execPath,
      [TSC, '--strict', '--exactOptionalPropertyTypes', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--noEmit', 'example.ts'],
      // An upper bound only: checking the MCP SDK's declarations too (no skipLibCheck) takes a
      // minute or more on a loaded two-core machine.
      { cwd: project, encoding: 'utf8', timeout: 240_000 },
    );
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.status).toBe(0);
  }, 300_000);
});

/**
 * The published types as a new user meets them: `npm pack`, the tarball installed offline into a
 * scratch project with nothing else (no @types/node), and a strict example compiled by
 * `tsc --strict --module nodenext --moduleResolution nodenext` without skipLibCheck. A declaration
 * that drags in a dependency's Node-only types (pino's Logger did) fails here, not on a user's
 * machine.
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
function scratchLock(tarball: string): object {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const root = lock.packages[''] as LockEntry & { dependencies: Record<string, string> };
  const integrity = `sha512-${createHash('sha512').update(readFileSync(join(dir, tarball))).digest('base64')}`;
  const packages: Record<string, LockEntry> = {
    '': { name: 'consumer', dependencies: { symfonic: `file:../${tarball}` } },
    'node_modules/symfonic': {
      version: root['version'] as string,
      resolved: `file:../${tarball}`,
      integrity,
      dependencies: root.dependencies,
      ...(root['peerDependencies'] ? { peerDependencies: root['peerDependencies'] } : {}),
      ...(root['peerDependenciesMeta'] ? { peerDependenciesMeta: root['peerDependenciesMeta'] } : {}),
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.dev || entry.devOptional || entry.link) continue;
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const resolved = entry.resolved ?? `https://registry.npmjs.org/${name}/-/${name.split('/').pop()}-${entry.version}.tgz`;
    packages[path] = { ...entry, resolved };
  }
  return { name: 'consumer', lockfileVersion: 3, requires: true, packages };
}

beforeAll(() => {
  expect(distStaleness()).toBeNull();
  dir = mkdtempSync(join(tmpdir(), 'symfonic-strict-'));
  // --ignore-scripts: `prepare` would rebuild dist/ under the other test files reading it.
  const packed = JSON.parse(run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], ROOT)) as { filename: string }[];
  const tarball = packed[0]!.filename;
  project = join(dir, 'consumer');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies: { symfonic: `file:../${tarball}` } }));
  writeFileSync(join(project, 'package-lock.json'), JSON.stringify(scratchLock(tarball), null, 2));
  run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], project);
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const EXAMPLE = `import { z } from 'zod';
import {
  BudgetExceededError, FrameworkConfig, MetricsCollector, SubAgentSpec, SymfonicAgent, TenantBudgets, defineTool,
  priceTable, type AgentResponse, type Logger, type Tool, type ToolContext, type Usage,
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

  it('compiles a strict example using the main, testing and telemetry entries (tsc --strict --module nodenext, no skipLibCheck)', () => {
    writeFileSync(join(project, 'example.ts'), EXAMPLE);
    const result = spawnSync(
      process.execPath,
      [TSC, '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--noEmit', 'example.ts'],
      { cwd: project, encoding: 'utf8', timeout: 60_000 },
    );
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.status).toBe(0);
  }, 60_000);
});

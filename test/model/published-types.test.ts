/**
 * What a user's strict project passes to symfonic compiles under `exactOptionalPropertyTypes`:
 * real AI SDK model objects (specification v2 and v3) and the SDK's own model types given to
 * aiSdkModel, and a real MCP `Client` given to mcpTools. Compiled against the built declarations
 * (dist/), as a user compiles against the published ones.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { distStaleness, ROOT } from '../support/dist.js';

const CONSUMER = `
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAI as createOpenAIv2 } from '@ai-sdk/openai-v2';
import type { LanguageModelV2, LanguageModelV3 } from '@ai-sdk/provider';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { aiSdkModel, mcpTools, type AiSdkLanguageModel, type ModelProvider, type Tool } from '../../../../dist/index.js';

export function providers(v2: LanguageModelV2, v3: LanguageModelV3): ModelProvider[] {
  const fromTypes: AiSdkLanguageModel[] = [v2, v3];
  return [
    ...fromTypes.map((m) => aiSdkModel(m)),
    aiSdkModel(createOpenAI({ apiKey: 'k' }).chat('gpt-4o-mini'), { providerOptions: { openai: { strictJsonSchema: false } } }),
    aiSdkModel(createOpenAI({ apiKey: 'k' })('gpt-4o-mini')),
    aiSdkModel(createOpenAIv2({ apiKey: 'k' }).chat('gpt-4o-mini'), { server: { address: 'api.openai.com', port: 443 } }),
  ];
}

export async function tools(): Promise<Tool<Record<string, unknown>>[]> {
  const client = new Client({ name: 'consumer', version: '1.0.0' });
  return mcpTools(client, { prefix: 'gh_' });
}
`;

it('compiles a consumer of aiSdkModel and mcpTools with exactOptionalPropertyTypes', () => {
  expect(distStaleness()).toBeNull();
  const dir = join(ROOT, 'node_modules', '.cache', 'symfonic-exact-optional', 'consumer');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'consumer.ts'), CONSUMER);
  const args = ['--noEmit', '--strict', '--exactOptionalPropertyTypes', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--skipLibCheck', 'consumer.ts'];
  const result = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), ...args], { cwd: dir, encoding: 'utf8', timeout: 90_000 });
  expect(`${result.stdout}${result.stderr}`).toBe('');
  expect(result.status).toBe(0);
}, 90_000);

it('loads nothing of the AI SDK: no built module imports it', () => {
  expect(distStaleness()).toBeNull();
  const dir = join(ROOT, 'dist', 'model');
  const modules = readdirSync(dir).filter((f) => f.startsWith('ai-sdk') && f.endsWith('.js'));
  expect(modules.length).toBeGreaterThanOrEqual(4);
  for (const file of modules) expect(readFileSync(join(dir, file), 'utf8'), file).not.toMatch(/from ['"]@ai-sdk|import\(['"]@ai-sdk/);
});

/** `import 'symfonic'` must not load the A2A SDK; serveAgent and remoteChild load it on first use. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../cli/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'symfonic-lazy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A resolve hook reporting every module specifier of the A2A SDK (and the W3C propagators) that is loaded.
writeFileSync(
  join(dir, 'hooks.mjs'),
  `let port;
export async function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  if (specifier.startsWith('@a2a-js/') || specifier === '@a2a-js/sdk' || specifier === '@opentelemetry/core') port.postMessage(specifier);
  return next(specifier, context);
}
`,
);
writeFileSync(
  join(dir, 'main.mjs'),
  `import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
const { port1, port2 } = new MessageChannel();
const seen = [];
port1.on('message', (m) => seen.push(m));
register(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)}, { data: { port: port2 }, transferList: [port2] });
const tick = () => new Promise((r) => setTimeout(r, 100));
const symfonic = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist/index.js')).href)});
const { scriptedModel } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist/testing/index.js')).href)});
await tick();
const afterImport = [...seen];
const child = symfonic.remoteChild({ name: 'x', url: 'http://127.0.0.1:9', description: 'd' });
await tick();
const afterRemoteChild = [...seen];
const agent = new symfonic.SymfonicAgent({ name: 'a', modelProvider: scriptedModel(['hi']) });
const served = await symfonic.serveAgent(agent, { authenticate: () => null });
await served.close();
await tick();
port1.close();
console.log(JSON.stringify({ afterImport, afterRemoteChild, afterServe: [...new Set(seen)] }));
`,
);

describe('lazy loading', () => {
  it("importing symfonic (and making a remoteChild) loads no A2A SDK; serving loads it", () => {
    const r = spawnSync(process.execPath, [join(dir, 'main.mjs')], { cwd: ROOT, encoding: 'utf8', timeout: 20_000 });
    expect(r.status, r.stderr).toBe(0);
    const seen = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, string[]>;
    expect(seen['afterImport']).toEqual([]);
    expect(seen['afterRemoteChild']).toEqual([]);
    expect(seen['afterServe']).toEqual(expect.arrayContaining(['@a2a-js/sdk', '@a2a-js/sdk/server', '@opentelemetry/core']));
  });
});

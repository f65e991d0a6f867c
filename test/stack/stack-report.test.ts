/**
 * What `npm run stack -- up|status` prints (issue 34): "stack ready" only when every service is
 * healthy, the addresses of the services that run and of no other (it named Redis when Redis had
 * not started), every line within 80 columns (it printed 140).
 */
import { describe, expect, it } from 'vitest';

interface Status {
  name: string;
  healthy: boolean;
}
interface Report {
  WIDTH: number;
  serviceLines(name: string, result: { started: boolean; pid: number; ms: number }, log: string): string[];
  addressLines(cfg: unknown, statuses: Status[], envFile?: string): string[];
  readyLines(statuses: Status[], seconds: number, withBuildSeconds: number): string[];
}
const report: string = '../../scripts/stack-report.mjs';
const config: string = '../../scripts/stack-config.mjs';
const { WIDTH, addressLines, readyLines, serviceLines } = (await import(report)) as Report;
const { stackConfig } = (await import(config)) as { stackConfig(env: Record<string, string>): { services: { name: string }[] } };

const STATE = '/home/someone/projects/symfonic/.stack';
const cfg = stackConfig({ SYMFONIC_STACK_PORT_BASE: '29000', SYMFONIC_STACK_DIR: STATE });
const statuses = (down: string[]): Status[] => cfg.services.map((s) => ({ name: s.name, healthy: !down.includes(s.name) }));
const wider = (lines: string[]) => lines.filter((l) => l.length > WIDTH);

describe('npm run stack -- up', () => {
  it('with every service healthy: ready, every address, the environment file and an example, in 80 columns', () => {
    const all = statuses([]);
    const lines = [...serviceLines('prometheus', { started: true, pid: 123456, ms: 1234 }, `${STATE}/logs/prometheus.log`), ...readyLines(all, 3.2, 3.4), ...addressLines(cfg, all, `${STATE}/env.json`)];
    expect(WIDTH).toBe(80);
    expect(wider(lines)).toEqual([]);
    const text = lines.join('\n');
    expect(text).toContain('stack ready in 3.2 s');
    for (const address of ['http://127.0.0.1:29318', 'http://127.0.0.1:29317', 'http://127.0.0.1:29686/api/v3/traces/<trace id>', 'http://127.0.0.1:29090', 'redis://127.0.0.1:29379', 'postgresql://symfonic@127.0.0.1:29432/symfonic', `${STATE}/env.json`]) {
      expect(text).toContain(address);
    }
    expect(text).toMatch(/npm run demo -- \\\n\s+--otlp http:\/\/127\.0\.0\.1:29318 \\\n\s+--jaeger-url http:\/\/127\.0\.0\.1:29686/);
  });

  it('with Redis and Jaeger down: not "ready", says which are not running, and names no address of theirs', () => {
    const some = statuses(['redis', 'jaeger']);
    const lines = [...readyLines(some, 1, 1), ...addressLines(cfg, some, undefined)];
    expect(wider(lines)).toEqual([]);
    const text = lines.join('\n');
    expect(text).not.toContain('stack ready');
    expect(text).toContain('not running: jaeger, redis');
    expect(text).not.toMatch(/Redis|redis:\/\/|Jaeger|29686|npm run demo|env\.json/);
    expect(text).toContain('postgresql://symfonic@127.0.0.1:29432/symfonic');
    expect(text).toContain('http://127.0.0.1:29318');
  });
});

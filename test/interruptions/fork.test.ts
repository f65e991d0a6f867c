/**
 * A tree suspended here resumes in another process: the snapshot goes to a file, a forked Node
 * process that never saw the run builds the same agents from the built package and resumes it,
 * and the tree completes there under the same run ids and the same trace.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MetricsCollector, SPAN_ATTRIBUTES } from '../../src/index.js';
import { recordEachTest } from '../support/per-test.js';
import { BILL, KEY_A, KEY_B, decideAll, payTree, scope, sum, tokens } from './helpers.js';

const rec = recordEachTest();
const dir = mkdtempSync(join(tmpdir(), 'symfonic-resume-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIXTURE = join(import.meta.dirname, 'fixtures', 'resume-in-child.mjs');

interface Report {
  pid: number;
  response?: { status: string; runId: string; rootRunId: string; finalResponse: string; traceId: string | null; totalUsage: { inputTokens: number; outputTokens: number }; usage: { inputTokens: number; outputTokens: number } };
  spans?: { name: string; traceId: string; runId: string | null; links: string[] }[];
  tenant?: { inputTokens: number; outputTokens: number };
  openRuns?: number;
  paid?: number[];
  calls?: Record<string, number>;
  error?: { name: string; message: string };
}

/** Forks the fixture on a snapshot file and waits (bounded) for its one report and its exit. */
function resumeElsewhere(file: string, decisions: unknown, snapshotKey?: string): Promise<{ report: Report; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = fork(FIXTURE, [file, JSON.stringify(decisions), ...(snapshotKey ? [snapshotKey] : [])], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    let report: Report | undefined;
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the resuming process did not finish in 20 s; stderr: ${stderr}`));
    }, 20_000);
    child.on('message', (m) => (report = m as Report));
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (report === undefined) reject(new Error(`the resuming process exited ${code} without a report; stderr: ${stderr}`));
      else resolve({ report, code });
    });
  });
}

describe('resume in a forked process', () => {
  it('completes there under the same run ids and trace id; the tool runs there, once', { timeout: 30_000 }, async () => {
    const collector = new MetricsCollector();
    const here = payTree({ collector });
    const r = await here.boss.run('pay the bill', { scope });
    expect(r.status).toBe('suspended');
    expect(r.traceId).toMatch(/^[0-9a-f]{32}$/);
    const suspendedSpans = rec.spans().filter((s) => s.name.startsWith('invoke_agent'));
    expect(suspendedSpans).toHaveLength(3);
    const file = join(dir, 'snapshot.json');
    writeFileSync(file, JSON.stringify(r.snapshot));

    const { report, code } = await resumeElsewhere(file, decideAll(r, { approve: true }));
    expect(report.error).toBeUndefined();
    expect(code).toBe(0);
    expect(report.pid).not.toBe(process.pid);
    expect(report.response).toMatchObject({ status: 'completed', runId: r.runId, rootRunId: r.runId, finalResponse: 'boss: manager: clerk: paid 42', traceId: r.traceId });
    expect(report.paid).toEqual([42]);
    expect(here.paid).toEqual([]);
    // Every run of the tree went on there under the id it had here, in the same trace, each
    // resumed span linked to the span it suspended in here.
    const invokes = report.spans!.filter((s) => s.name.startsWith('invoke_agent'));
    expect(invokes.map((s) => s.runId).sort()).toEqual(suspendedSpans.map((s) => s.attributes[SPAN_ATTRIBUTES.runId]).sort());
    expect(new Set(report.spans!.map((s) => s.traceId))).toEqual(new Set([r.traceId]));
    for (const s of invokes) {
      const before = suspendedSpans.find((x) => x.attributes[SPAN_ATTRIBUTES.runId] === s.runId)!;
      expect(s.links).toEqual([before.spanContext().spanId]);
    }
    // Its ledger holds only what was spent there: one call of each model. The root's totals hold all.
    expect(report.calls).toEqual({ boss: 1, manager: 1, clerk: 1 });
    expect(report.tenant).toMatchObject(sum(BILL.boss, BILL.manager, BILL.clerk));
    expect(report.openRuns).toBe(0);
    const all = sum(BILL.boss, BILL.manager, BILL.clerk, BILL.boss, BILL.manager, BILL.clerk);
    expect(tokens(report.response!.totalUsage)).toEqual(all);
    expect(tokens(collector.tenant(scope.tenantId).usage)).toEqual(sum(BILL.boss, BILL.manager, BILL.clerk));
  });

  it('a signed snapshot resumes there with the same key, and is refused there with another', { timeout: 30_000 }, async () => {
    const here = payTree({ snapshotKey: KEY_A });
    const r = await here.boss.run('pay the bill', { scope });
    const file = join(dir, 'signed.json');
    writeFileSync(file, JSON.stringify(r.snapshot));
    const refused = await resumeElsewhere(file, decideAll(r, { approve: true }), KEY_B);
    expect(refused.report.error).toMatchObject({ name: 'SnapshotError' });
    expect(refused.report.error!.message).toMatch(/signature/);
    const ok = await resumeElsewhere(file, decideAll(r, { approve: true }), KEY_A);
    expect(ok.report.response).toMatchObject({ status: 'completed', runId: r.runId });
  });
});

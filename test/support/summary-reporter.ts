import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends a run with one plain line, `N passed, N failed, N skipped`, after vitest's own summary:
 * a line any CI log reader understands, with no colour codes or layout to parse.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const m of testModules) {
      let failedHere = 0;
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failedHere++;
        else skipped++;
      }
      // A file that failed to load, or whose beforeAll threw, leaves its tests unrun rather than
      // failed; it counts as one failure so the line never reads green over a broken file.
      if (m.state() === 'failed' && failedHere === 0) failedHere = 1;
      failed += failedHere;
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}

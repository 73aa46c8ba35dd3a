/**
 * Prints one closing line, `Tests: N passed, N failed, N skipped`, that CI reads to count the
 * run (vitest's own summary is formatted for people), after a line saying how many answers the
 * tests checked against their route's response schema (test/support/response-count.ts).
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    let checkedAnswers = 0;
    for (const module of testModules) {
      let failedInModule = 0;
      for (const test of module.children.allTests()) {
        checkedAnswers += test.meta().checkedAnswers ?? 0;
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') failedInModule++;
        else counts.skipped++;
      }
      // A file that failed outside any test (a hook, an import) counts as one failure.
      counts.failed += module.state() === 'failed' && failedInModule === 0 ? 1 : failedInModule;
    }
    process.stdout.write(`\nAnswers checked against their route's response schema: ${checkedAnswers}`);
    process.stdout.write(`\nTests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}

// Prints one plain closing line, "e2e: N passed, N failed, N skipped", so a
// log reader that knows no vitest still sees what ran.
import type { Reporter, SerializedError, TestModule } from "vitest/node";

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const m of testModules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
      // A file that failed to load counts as a failure.
      if (m.state() === "failed" && [...m.children.allTests()].length === 0) failed++;
    }
    // An unhandled error fails the run: count it.
    failed += unhandledErrors.length;
    process.stdout.write(`\ne2e: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}

import { defineConfig } from "vitest/config";
import SummaryReporter from "./src/summary-reporter.ts";

// One real Chromium per test file, one file at a time: the machine has two
// cores and each file also runs its own `torii serve`.
export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    globalSetup: ["./src/global-setup.ts"],
    fileParallelism: false,
    maxWorkers: 1,
    isolate: true,
    testTimeout: 120_000,
    hookTimeout: 90_000,
    teardownTimeout: 30_000,
    reporters: ["verbose", new SummaryReporter()],
    // A failed e2e test is not retried: flakiness is a bug to fix, not to hide.
    retry: 0,
  },
});

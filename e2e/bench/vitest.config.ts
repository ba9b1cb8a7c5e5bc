import { defineConfig } from "vitest/config";

// `make bench-tools`: the browser-tool bench, one file, one browser; not part of `make test`.
export default defineConfig({
  test: {
    include: ["bench/**/*.bench.ts"],
    globalSetup: ["./src/global-setup.ts"],
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: 30 * 60_000,
    hookTimeout: 90_000,
    reporters: ["default"],
    retry: 0,
  },
});

import { defineConfig } from "vitest/config";

// `make bench-load`: the load benchmark (not part of `make test`).
export default defineConfig({
  test: {
    include: ["load/**/*.bench.test.ts"],
    globalSetup: ["./src/global-setup.ts"],
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: 900_000,
    hookTimeout: 120_000,
    reporters: ["verbose"],
  },
});

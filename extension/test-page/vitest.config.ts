// Real-browser tests of the page engine (page.js). One Chromium per run, one tab per test.
//   cd extension && npx vitest run --config test-page/vitest.config.ts
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

export default {
  test: {
    root: dirname(fileURLToPath(import.meta.url)),
    include: ["*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
};

// knip finds dead code: files no bundle reaches, exports nothing imports, unused dependencies
// (`npm run deadcode`, part of make test). Its entries are the bundles (scripts/entries.mjs), what
// catalogue.json and docs/tools.md are made from, and the page-engine bench tools; the unit tests
// are found by knip's vitest plugin, test-page's are named here.
import { entryPoints } from "./scripts/entries.mjs";

export default {
  entry: [...Object.values(entryPoints), "scripts/catalogue-source.ts", "test-page/*.test.ts", "test-page/bench.ts", "test-page/cpuprof.ts"],
  project: ["src/**/*.ts", "test/**/*.ts", "test-page/**/*.ts", "scripts/*.{mjs,ts}"],
};

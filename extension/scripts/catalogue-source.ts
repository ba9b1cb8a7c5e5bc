// What the build's catalogue.json (build.mjs) and docs/tools.md (gen-tools-doc.mjs) are made from:
// both bundle this module (import-ts.mjs) and read these exports. A module of its own, so that
// knip sees them used.
export { listTools, TOOLS } from "../src/tools/registry.js";
export { ERROR_HINTS } from "../src/tools/errors.js";
export { INSTRUCTIONS } from "../src/mcp/provider.js";
export { WAIT_FOR_SCHEMA } from "../src/tools/common.js";
export { PAGE_DATA_MARK, PAGE_DATA_FIELD, PAGE_DATA_SOURCE } from "../src/tools/define.js";

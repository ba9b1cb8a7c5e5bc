// Imports extension TypeScript into a Node script: `contents` (a module of re-exports, resolved from
// the extension's root) is bundled with esbuild in memory and imported. The modules it reaches must
// touch no chrome.* API at import, as the tool registry does not.

import * as esbuild from "esbuild";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const extensionRoot = join(dirname(fileURLToPath(import.meta.url)), "..");

export async function importTs(contents) {
  const bundle = await esbuild.build({
    absWorkingDir: extensionRoot,
    stdin: { contents, resolveDir: extensionRoot, loader: "ts" },
    bundle: true,
    format: "esm",
    platform: "node",
    write: false,
    logLevel: "error",
  });
  return import("data:text/javascript;base64," + Buffer.from(bundle.outputFiles[0].text).toString("base64"));
}

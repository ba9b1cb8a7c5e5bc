// Bundles the extension into dist/: the module service worker, the popup and the connect page,
// the page engine and the effect guard (a content script in every frame), plus manifest.json and
// the static html/css, the icons (scripts/icons.mjs), and catalogue.json: the tool registry's tools/list, which the Go binary
// embeds with the extension so agents see every tool before a browser connects.
// `node build.mjs --watch` rebuilds on change.

import * as esbuild from "esbuild";
import { cp, mkdir, readdir, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { importTs } from "./scripts/import-ts.mjs";
import { writeIcons } from "./scripts/icons.mjs";
import { entryPoints } from "./scripts/entries.mjs";

const root = dirname(fileURLToPath(import.meta.url));
const dist = join(root, "dist");
const watch = process.argv.includes("--watch");

async function clean() {
  await mkdir(dist, { recursive: true });
  for (const name of await readdir(dist)) {
    // .gitkeep keeps `go build` working (go:embed needs the folder) before the first build.
    if (name !== ".gitkeep") await rm(join(dist, name), { recursive: true, force: true });
  }
}

async function copyStatic() {
  await cp(join(root, "manifest.json"), join(dist, "manifest.json"));
  await cp(join(root, "static"), dist, { recursive: true });
  await writeIcons(dist);
}

async function writeCatalogue() {
  const m = await importTs(`export { listTools } from "./scripts/catalogue-source.ts";`);
  await writeFile(join(dist, "catalogue.json"), JSON.stringify({ tools: m.listTools() }));
}

const copyPlugin = {
  name: "copy-static",
  setup(build) {
    build.onEnd(async (result) => {
      if (result.errors.length === 0) await Promise.all([copyStatic(), writeCatalogue()]);
    });
  },
};

const options = {
  absWorkingDir: root,
  entryPoints,
  outdir: dist,
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "chrome120",
  sourcemap: "linked",
  legalComments: "none",
  logLevel: "info",
  plugins: [copyPlugin],
};

await clean();
if (watch) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
} else {
  await esbuild.build(options);
}

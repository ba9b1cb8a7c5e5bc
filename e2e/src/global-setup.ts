// Builds nothing: `make build` (or `make test`) builds the binary and the
// extension. This only checks they are there and that a browser exists.
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import { NO_BROWSER_MESSAGE, browserPath, extensionDir, inCI, repoRoot, toriiBin } from "./env.ts";

export default function setup(): void {
  const missing: string[] = [];
  if (!existsSync(toriiBin)) missing.push(`the torii binary (${relative(repoRoot, toriiBin) || toriiBin})`);
  if (!existsSync(join(extensionDir, "manifest.json")))
    missing.push(`the built extension (${relative(repoRoot, join(extensionDir, "manifest.json"))})`);
  if (missing.length > 0) {
    throw new Error(
      `e2e: missing ${missing.join(" and ")}. Build first: run \`make build\` at the repository root ` +
        "(or `make test`, which builds and then runs every test).",
    );
  }
  if (!browserPath) {
    if (inCI) throw new Error(`e2e: CI is set and ${NO_BROWSER_MESSAGE.replace(": skipping", "; refusing to skip")}`);
    console.warn(`\n*** e2e: ${NO_BROWSER_MESSAGE} ***\n`);
  } else {
    console.log(`e2e: browser ${browserPath}`);
  }
}

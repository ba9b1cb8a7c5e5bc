// Where the things under test live, and which browser runs them.
import { accessSync, constants, existsSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The torii binary the Makefile builds (override with TORII_BIN). */
export const toriiBin = process.env.TORII_BIN ?? join(repoRoot, "bin", "torii");

/** The built, unpacked extension (override with TORII_EXTENSION_DIR). */
export const extensionDir = process.env.TORII_EXTENSION_DIR ?? join(repoRoot, "extension", "dist");

/** Fixed by the manifest's `key`, so the daemon can pin the extension's Origin. */
export const EXTENSION_ID = "fljdejdpnpnjkonefefacbenoijnhcih";
export const EXTENSION_ORIGIN = `chrome-extension://${EXTENSION_ID}`;

/** CI must never skip the browser tests; a developer's machine may. */
export const inCI = !!process.env.CI && process.env.CI !== "0" && process.env.CI !== "false";

const BROWSER_NAMES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"];

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** TORII_BROWSER, else the first Chromium or Chrome on PATH. */
export function findBrowser(): string | undefined {
  const override = process.env.TORII_BROWSER;
  if (override) return isExecutable(override) ? override : undefined;
  const dirs = (process.env.PATH ?? "").split(delimiter).filter(Boolean);
  for (const d of ["/usr/bin", "/usr/local/bin", "/snap/bin"]) if (!dirs.includes(d)) dirs.push(d);
  for (const name of BROWSER_NAMES) {
    for (const d of dirs) {
      const p = join(d, name);
      if (existsSync(p) && isExecutable(p)) return p;
    }
  }
  return undefined;
}

export const browserPath = findBrowser();

export const NO_BROWSER_MESSAGE =
  "no Chromium or Chrome found (set TORII_BROWSER, or run `make setup` to install Debian's chromium): " +
  "skipping the browser end-to-end tests";

/** Flags every browser in this suite gets (closed network, root, fresh profile). */
export function chromiumArgs(): string[] {
  const args = [
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    `--disable-extensions-except=${extensionDir}`,
    `--load-extension=${extensionDir}`,
  ];
  if (process.getuid?.() === 0) args.push("--no-sandbox");
  return args;
}

// Where things are and which browser runs them. Every path comes from the environment or a flag,
// with standard defaults, so the harness runs the same on any Debian-like machine.
import { accessSync, constants } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const benchDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const repoRoot = resolve(benchDir, "..");

/** The torii binary `make build` produces (override with TORII_BIN). */
export const toriiBin = process.env.TORII_BIN ?? join(repoRoot, "bin", "torii");

/** The one Chromium all three servers drive (BENCH_BROWSER, then TORII_BROWSER, then the standard path). */
export function browserPath(): string {
  const p = process.env.BENCH_BROWSER ?? process.env.TORII_BROWSER ?? "/usr/bin/chromium";
  try {
    accessSync(p, constants.X_OK);
  } catch {
    throw new Error(`no browser at ${p}: set BENCH_BROWSER to a Chromium or Chrome executable (never downloaded by this harness)`);
  }
  return p;
}

export const isRoot = process.getuid?.() === 0;

/** Flags for a closed network and a fresh profile, given to every browser alike. */
export const COMMON_CHROME_ARGS = [
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--no-default-browser-check",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", rej);
    srv.listen(0, "127.0.0.1", () => {
      const a = srv.address();
      if (a === null || typeof a === "string") return rej(new Error("no port"));
      srv.close(() => res(a.port));
    });
  });
}

/** Short temp dirs: the daemon's unix socket path must stay under 108 bytes. */
export function tempDir(prefix = "tb-"): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export function removeDir(dir: string): Promise<void> {
  return rm(dir, { recursive: true, force: true, maxRetries: 3 });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function pollUntil<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000, everyMs = 200): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== null && v !== false) return v as T;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await sleep(everyMs);
  }
}

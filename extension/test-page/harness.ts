// Shared setup for the page-engine tests and bench: bundles src/page/index.ts with esbuild,
// serves testdata/pages on two loopback ports (two origins, for a real cross-origin iframe),
// and drives the installed Chromium with playwright-core. Never downloads a browser.
import { buildSync } from "esbuild";
import { createServer, type Server } from "node:http";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { tagName } from "../src/shared/refname";

/** The repository root: found from this file, else from the working directory (bundled bench). */
function repoRoot(): string {
  for (const start of [dirname(fileURLToPath(import.meta.url)), process.cwd()]) {
    for (let d = start; ; d = dirname(d)) {
      if (existsSync(join(d, "testdata", "pages")) && existsSync(join(d, "extension", "src", "page"))) return d;
      if (dirname(d) === d) break;
    }
  }
  throw new Error("run from inside the repository");
}
const ROOT = repoRoot();
const PAGES = join(ROOT, "testdata", "pages");
const BENCH_PAGES = join(ROOT, "bench", "pages");
const ENTRY = join(ROOT, "extension", "src", "page", "index.ts");

function bundle(): string {
  const r = buildSync({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: "iife",
    target: "chrome120",
    minify: false,
    legalComments: "none",
  });
  return (r.outputFiles[0] as { text: string }).text;
}

const TYPES: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript" };

function serve(): Promise<{ server: Server; port: number }> {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    // "/bench/…" serves the benchmark's pages (bench/pages), for the micro-benchmark.
    const bench = url.pathname.startsWith("/bench/");
    const dir = bench ? BENCH_PAGES : PAGES;
    const file = normalize(join(dir, decodeURIComponent(bench ? url.pathname.slice(6) : url.pathname)));
    if (!file.startsWith(dir)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream", "cache-control": "no-store" });
      res.end(body);
    } catch {
      res.writeHead(404).end("not found");
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => {
    const a = server.address();
    resolve({ server, port: typeof a === "object" && a ? a.port : 0 });
  }));
}

export interface Env {
  browser: Browser;
  /** Origin A serves the fixtures, origin B the same files on another port. */
  origin: string;
  originB: string;
  portB: number;
  code: string;
  close(): Promise<void>;
}

/** The installed Chromium: $CHROMIUM_PATH, else the first chromium/chrome found on $PATH. */
function findChromium(): string {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  for (const dir of (process.env.PATH ?? "").split(":")) {
    for (const name of ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]) {
      if (dir && existsSync(join(dir, name))) return join(dir, name);
    }
  }
  throw new Error("no Chromium found: install one (never downloaded by the tests) or set CHROMIUM_PATH");
}
const CHROMIUM = findChromium();

export async function setup(): Promise<Env> {
  const code = bundle();
  const a = await serve();
  const b = await serve();
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  return {
    browser,
    origin: `http://127.0.0.1:${a.port}`,
    originB: `http://127.0.0.1:${b.port}`,
    portB: b.port,
    code,
    async close() {
      await browser.close();
      a.server.close();
      b.server.close();
    },
  };
}

/** Injects page.js into the page (main world here; the isolated world changes nothing for these tests). */
export async function inject(page: Page, code: string, frame = page.mainFrame()): Promise<void> {
  await frame.evaluate(code);
}

export interface Ok<T> {
  ok: true;
  docId: string;
  refTag?: string;
  origin: string;
  url: string;
  value: T;
}
export interface Err {
  ok: false;
  docId: string;
  refTag?: string;
  origin: string;
  url: string;
  error: { code: string; message: string; hint: string };
}

/**
 * __torii.call(name, args) in the page. Like the worker, it names the origin the call is allowed to
 * run in: the document's own unless the test passes `origin`.
 */
export async function call<T = any>(page: Page | ReturnType<Page["mainFrame"]>, name: string, args: object = {}): Promise<Ok<T> | Err> {
  // Like the worker, every call offers a tag no document has had (taken only by a document
  // without one); a test may pass its own refTag.
  const offer = { refTag: tagName(nextTag++) };
  return (await page.evaluate(
    ([n, a]) => (globalThis as any).__torii.call(n, { origin: self.origin, ...a }),
    [name, { ...offer, ...args }] as const,
  )) as Ok<T> | Err;
}

let nextTag = 0;

/** Like call, but fails the test on an error reply. */
export async function ok<T = any>(page: Page | ReturnType<Page["mainFrame"]>, name: string, args: object = {}): Promise<T> {
  const r = await call<T>(page, name, args);
  if (!r.ok) throw new Error(`${name} failed: ${JSON.stringify(r.error)}`);
  return r.value;
}

export async function open(env: Env, path: string, opts: { inject?: boolean; width?: number; height?: number } = {}): Promise<Page> {
  const page = await env.browser.newPage({ viewport: { width: opts.width ?? 1000, height: opts.height ?? 700 } });
  await page.goto(env.origin + "/" + path, { waitUntil: "load" });
  if (opts.inject !== false) await inject(page, env.code);
  return page;
}

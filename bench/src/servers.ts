// The MCP servers under test (agent-browser's adapter is in agent-browser.ts), each started
// against the same installed Chromium and driven through the same MCP client library
// (@modelcontextprotocol/sdk) over stdio. Each adapter maps the benchmark's operations (navigate,
// snapshot, click-and-observe, fill a form, the cheapest call) onto that server's own tools, the
// way an agent would use them.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { COMMON_CHROME_ARGS, benchDir, browserPath, freePort, isRoot, pollUntil, removeDir, tempDir, toriiBin } from "./env.ts";
import type { Addressable, Dialect } from "./fidelity.ts";
import { chromeRole, now, type MemGroup } from "./metrics.ts";

export interface CallResult {
  tool: string;
  ms: number;
  /** Characters of text content returned to the agent. */
  chars: number;
  /** Characters of structuredContent's JSON (0 without it): what a client that reads only that part gets. */
  structuredChars: number;
  text: string;
  /** structuredContent itself, when the server sent one. */
  structured?: unknown;
}

/** A form field resolved to the server's handle for it. */
export interface FormField {
  el: Addressable;
  type: "text" | "select" | "checkbox" | "radio";
  value: string;
}

const CALL_TIMEOUT_MS = 300_000;

export class ToolError extends Error {}

function textOf(r: unknown): string {
  const content = (r as { content?: { type: string; text?: string; data?: string }[] }).content ?? [];
  return content.map((c) => (c.type === "text" ? (c.text ?? "") : c.type === "image" ? `[image ${c.data?.length ?? 0} b64 chars]` : `[${c.type}]`)).join("\n");
}

class Tail {
  private s = "";
  push(d: string) {
    this.s = (this.s + d).slice(-16_000);
  }
  toString() {
    return this.s;
  }
}

export abstract class BenchServer {
  abstract readonly id: Dialect;
  abstract readonly label: string;
  version = "?";
  protected client = new Client({ name: "torii-bench", version: "0.1.0" });
  protected transport: StdioClientTransport | undefined;
  protected readonly stderr = new Tail();
  toolsListChars = 0;
  /** Characters of the server's `instructions`, which an agent's context also holds. */
  instructionsChars = 0;
  toolCount = 0;
  protected toolNames = new Set<string>();

  abstract start(): Promise<void>;
  abstract stop(): Promise<void>;
  /** Process trees whose memory counts for this server. */
  abstract mem(): MemGroup;
  /** Open a URL in the benchmark's tab. */
  abstract navigate(url: string): Promise<CallResult>;
  /** The full snapshot of the current page (following pagination where the server has it). */
  abstract snapshot(): Promise<CallResult>;
  /** Click, plus whatever the server returns so the agent sees the result. */
  abstract clickObserve(el: Addressable): Promise<CallResult>;
  /** Fill every field and press submit, the server's most economical way. */
  abstract fillForm(fields: FormField[], submit: Addressable): Promise<CallResult[]>;
  /** After a failed call the run tolerates: get the server usable for the next page. */
  async recover(): Promise<void> {}
  /** A server whose default snapshot is not the whole page (agent-browser) gives that one's size here. */
  async interactiveChars(): Promise<number | undefined> {
    return undefined;
  }
  /** The server's cheapest tool that still reaches the browser (a tab list, the URL). */
  abstract readonly cheapTool: { name: string; args: () => Record<string, unknown> };

  protected async connect(t: StdioClientTransport): Promise<void> {
    this.transport = t;
    t.stderr?.on("data", (d: Buffer) => this.stderr.push(d.toString()));
    await this.client.connect(t);
    this.version = this.client.getServerVersion()?.version ?? "?";
    this.instructionsChars = this.client.getInstructions()?.length ?? 0;
    const tools = [];
    let cursor: string | undefined;
    do {
      const list = await this.client.listTools(cursor ? { cursor } : undefined);
      tools.push(...list.tools);
      cursor = list.nextCursor;
    } while (cursor);
    this.toolsListChars = JSON.stringify(tools).length;
    this.toolCount = tools.length;
    this.toolNames = new Set(tools.map((t) => t.name));
  }

  /** An MCP `ping`: the transport alone, no tool and no browser. */
  async ping(): Promise<number> {
    const t0 = now();
    await this.client.ping();
    return now() - t0;
  }

  get pid(): number | undefined {
    return this.transport?.pid ?? undefined;
  }

  async call(tool: string, args: Record<string, unknown>): Promise<CallResult> {
    const t0 = now();
    let r;
    try {
      r = await this.client.callTool({ name: tool, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS, maxTotalTimeout: CALL_TIMEOUT_MS });
    } catch (e) {
      throw new ToolError(`${this.label}: ${tool}(${JSON.stringify(args).slice(0, 300)}) failed: ${String(e)}\nserver stderr tail:\n${this.stderr}`);
    }
    const ms = now() - t0;
    const text = textOf(r);
    if (r.isError) throw new ToolError(`${this.label}: ${tool}(${JSON.stringify(args).slice(0, 300)}) returned isError: ${text.slice(0, 800)}`);
    const sc = (r as { structuredContent?: unknown }).structuredContent;
    return { tool, ms, chars: text.length, structuredChars: sc === undefined ? 0 : JSON.stringify(sc).length, text, ...(sc === undefined ? {} : { structured: sc }) };
  }

  protected async closeClient(): Promise<void> {
    try {
      await this.client.close();
    } catch {
      // already gone
    }
  }
}

/** Sums a multi-call operation into one result (latency and characters add up). */
export function combine(tool: string, rs: CallResult[]): CallResult {
  const sum = (f: (r: CallResult) => number) => rs.reduce((a, r) => a + f(r), 0);
  return { tool, ms: sum((r) => r.ms), chars: sum((r) => r.chars), structuredChars: sum((r) => r.structuredChars), text: rs.map((r) => r.text).join("\n") };
}

// ---------------------------------------------------------------- Playwright MCP

export class PlaywrightMcp extends BenchServer {
  readonly id = "playwright" as const;
  readonly label = "Playwright MCP";
  private dir = "";

  async start(): Promise<void> {
    // Its own cwd: Playwright MCP writes snapshot files into the workspace (cwd) it is given.
    this.dir = await tempDir("tb-pw-");
    const cfg = join(this.dir, "config.json");
    await writeFile(cfg, JSON.stringify({ browser: { launchOptions: { args: COMMON_CHROME_ARGS } } }));
    const args = [join(benchDir, "node_modules", "@playwright", "mcp", "cli.js"), "--headless", "--isolated", "--executable-path", browserPath(), "--config", cfg];
    if (isRoot) args.push("--no-sandbox");
    await this.connect(new StdioClientTransport({ command: process.execPath, args, cwd: this.dir, stderr: "pipe" }));
  }

  async stop(): Promise<void> {
    await this.closeClient();
    await removeDir(this.dir);
  }

  mem(): MemGroup {
    return { roots: () => (this.pid ? [this.pid] : []), classify: peerRole };
  }

  readonly cheapTool = { name: "browser_tabs", args: () => ({ action: "list" }) };

  navigate(url: string) {
    return this.call("browser_navigate", { url });
  }

  snapshot() {
    return this.call("browser_snapshot", {});
  }

  /**
   * This version of Playwright MCP answers an action with a link to a snapshot file it wrote in its
   * workspace ("- [Snapshot](.playwright-mcp/page-….yml)"), not the snapshot itself. An agent has to
   * read that file to see the result; the harness reads it for it at no extra turn (generous to
   * Playwright: the read's time is a local file read) and counts its characters as returned.
   */
  private async withLinkedSnapshot(r: CallResult): Promise<CallResult> {
    const m = /\[Snapshot\]\(([^)]+\.ya?ml)\)/.exec(r.text);
    if (!m) return r;
    const t0 = now();
    const text = readFileSync(join(this.dir, m[1] as string), "utf8");
    return { ...r, ms: r.ms + (now() - t0), chars: r.chars + text.length, text: r.text + "\n" + text };
  }

  async clickObserve(el: Addressable) {
    return this.withLinkedSnapshot(await this.call("browser_click", { target: el.ref, element: `${el.role} "${el.name}"` }));
  }

  async fillForm(fields: FormField[], submit: Addressable): Promise<CallResult[]> {
    const TYPE = { text: "textbox", select: "combobox", checkbox: "checkbox", radio: "radio" } as const;
    const filled = await this.call("browser_fill_form", {
      fields: fields.map((f) => ({ target: f.el.ref, name: f.el.name, type: TYPE[f.type], value: f.type === "checkbox" || f.type === "radio" ? "true" : f.value })),
    });
    return [filled, await this.clickObserve(submit)];
  }
}

// ---------------------------------------------------------------- Chrome DevTools MCP

export class DevtoolsMcp extends BenchServer {
  readonly id = "devtools" as const;
  readonly label = "Chrome DevTools MCP";
  private pageId = 1;
  private dir = "";

  async start(): Promise<void> {
    this.dir = await tempDir("tb-cd-");
    const args = [
      join(benchDir, "node_modules", "chrome-devtools-mcp", "build", "src", "bin", "chrome-devtools-mcp.js"),
      "--headless",
      "--isolated",
      "--executablePath",
      browserPath(),
      "--no-usage-statistics",
      "--no-performance-crux",
      ...COMMON_CHROME_ARGS.map((a) => `--chromeArg=${a}`),
    ];
    if (isRoot) args.push("--chromeArg=--no-sandbox");
    await this.connect(new StdioClientTransport({ command: process.execPath, args, cwd: this.dir, stderr: "pipe", env: { ...process.env, CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: "1" } as Record<string, string> }));
    const pages = await this.call("list_pages", {});
    const m = /^(\d+): .*\[selected\]/m.exec(pages.text) ?? /^(\d+): /m.exec(pages.text);
    if (!m) throw new Error(`${this.label}: list_pages gave no page id:\n${pages.text}`);
    this.pageId = Number(m[1]);
  }

  async stop(): Promise<void> {
    await this.closeClient();
    await removeDir(this.dir);
  }

  mem(): MemGroup {
    return { roots: () => (this.pid ? [this.pid] : []), classify: peerRole };
  }

  readonly cheapTool = { name: "list_pages", args: () => ({}) };

  navigate(url: string) {
    return this.call("navigate_page", { pageId: this.pageId, type: "url", url });
  }

  snapshot() {
    return this.call("take_snapshot", { pageId: this.pageId });
  }

  clickObserve(el: Addressable) {
    return this.call("click", { pageId: this.pageId, uid: el.ref, includeSnapshot: true });
  }

  async fillForm(fields: FormField[], submit: Addressable): Promise<CallResult[]> {
    const filled = await this.call("fill_form", {
      pageId: this.pageId,
      elements: fields.map((f) => ({ uid: f.el.ref, value: f.type === "checkbox" || f.type === "radio" ? "true" : f.value })),
    });
    return [filled, await this.clickObserve(submit)];
  }
}

// ---------------------------------------------------------------- Torii

/**
 * Torii as a person runs it: `torii launch --headless` (daemon + managed Chromium with the
 * extension, auto-paired) in throwaway state/config dirs on a free port, then `torii mcp` (stdio)
 * for the agent. Memory counts the daemon, the `torii mcp` process and the whole browser tree, with
 * the extension's own process (its service worker) broken out.
 */
export class ToriiMcp extends BenchServer {
  readonly id: "torii" | "toriibefore";
  readonly label: string;
  /** The binary; `before` marks a build of the last commit, measured in the same run for a before/after. */
  constructor(private readonly bin = toriiBin, before = false) {
    super();
    this.id = before ? "toriibefore" : "torii";
    this.label = before ? "Torii before" : "Torii";
  }
  private root = "";
  private env: Record<string, string> = {};
  private daemonPid = 0;
  private browserPid = 0;
  /** The one tab the bench drives: the first navigate opens it, every later call names it. */
  tabId: number | undefined;
  /** Launched with `--permissive` (see start). */
  permissive = false;
  /** Snapshot page size: the largest the tool allows, so a full snapshot takes the fewest calls. */
  static readonly SNAPSHOT_PAGE = 200_000;

  async start(): Promise<void> {
    this.root = await tempDir("tb-t-");
    const state = join(this.root, "s");
    const config = join(this.root, "c");
    await mkdir(state, { recursive: true, mode: 0o700 });
    await mkdir(config, { recursive: true, mode: 0o700 });
    const port = await freePort();
    await writeFile(join(config, "config.json"), JSON.stringify({ listen: `127.0.0.1:${port}` }), { mode: 0o600 });
    // XDG_STATE_HOME: the daemon's discovery record stays in the bench's folder, not the person's.
    this.env = { ...(process.env as Record<string, string>), TORII_STATE_DIR: state, TORII_CONFIG_DIR: config, XDG_STATE_HOME: join(this.root, "xdg"), NO_COLOR: "1" };

    // The peers have no policy at all; Torii's dedicated profile gets `--permissive` (every origin
    // allowed, act mode on, approvals pre-granted) where the binary has it. Its policy gate still
    // runs on every call, so its cost is measured. Older binaries had no allowlist and no flag.
    const help = await run(this.bin, ["launch", "-h"], this.env, 15_000);
    this.permissive = /-permissive\b/.test(help.stdout + help.stderr);
    const launchArgs = ["launch", "--headless", "--browser", browserPath(), ...(this.permissive ? ["--permissive"] : [])];
    const launched = await run(this.bin, launchArgs, this.env, 90_000);
    // Pids first, so stop() can end what launch started even when it failed.
    const bp = /\(pid (\d+)/.exec(launched.stderr + launched.stdout);
    if (bp) this.browserPid = Number(bp[1]);
    const st = await run(this.bin, ["status", "--json"], this.env, 15_000).catch(() => ({ code: 1, stdout: "", stderr: "" }));
    try {
      const j = JSON.parse(st.stdout) as { pid?: number; PID?: number };
      this.daemonPid = j.pid ?? j.PID ?? 0;
    } catch {
      // reported below if launch failed; otherwise memory just lacks the daemon
    }
    if (launched.code !== 0) {
      throw new Error(`torii launch failed (exit ${launched.code}):\n${launched.stdout}\n${launched.stderr}\n` +
        `--- daemon log (tail) ---\n${tailOf(join(state, "torii.log"))}\n--- browser log (tail) ---\n${tailOf(join(state, "browser.log"))}`);
    }
    if (!this.daemonPid) throw new Error(`torii status --json gave no daemon pid:\n${st.stdout}\n${st.stderr}`);
    await this.connect(new StdioClientTransport({ command: this.bin, args: ["mcp", "--session-label", "bench"], env: this.env, stderr: "pipe" }));
  }

  async stop(): Promise<void> {
    await this.closeClient();
    for (const pid of [this.browserPid, this.daemonPid]) {
      if (!pid) continue;
      try {
        process.kill(pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
    await pollUntil("torii's daemon and browser to exit", () => ![this.browserPid, this.daemonPid].some((p) => p && alive(p)), 15_000).catch(() => {
      for (const p of [this.browserPid, this.daemonPid]) if (p && alive(p)) process.kill(p, "SIGKILL");
    });
    await removeDir(this.root);
  }

  mem(): MemGroup {
    return {
      roots: () => [this.daemonPid, this.browserPid, this.pid ?? 0].filter(Boolean),
      classify: (cmd) => {
        // The binary may carry another name (a copied build): the browser's processes are the rest.
        if (!argv0(cmd).startsWith("torii")) return chromeRole(cmd);
        return / mcp\b/.test(cmd) ? "mcp-proxy" : "daemon";
      },
    };
  }

  readonly cheapTool = { name: "tabs", args: () => ({}) };

  async navigate(url: string): Promise<CallResult> {
    const r = await this.call("navigate", this.tabId === undefined ? { url } : { url, tabId: this.tabId });
    if (this.tabId === undefined) {
      const m = /\btab (\d+)/.exec(r.text);
      if (!m) throw new Error(`Torii: navigate did not name its tab:\n${r.text}`);
      this.tabId = Number(m[1]);
    }
    return r;
  }

  async snapshot(): Promise<CallResult> {
    const parts: CallResult[] = [];
    let args: Record<string, unknown> = { tabId: this.tabId, maxChars: ToriiMcp.SNAPSHOT_PAGE };
    for (let i = 0; i < 100; i++) {
      const r = await this.call("snapshot", args);
      parts.push(r);
      const more = /\[more: cursor=([^\]\s]+)\]\s*$/.exec(r.text);
      if (!more) break;
      args = { tabId: this.tabId, maxChars: ToriiMcp.SNAPSHOT_PAGE, cursor: more[1] };
    }
    const c = combine("snapshot", parts);
    c.text = c.text.replace(/\n\[more: cursor=[^\]\s]+\]/g, "");
    return Object.assign(c, { calls: parts.length });
  }

  clickObserve(el: Addressable) {
    return this.call("click", { tabId: this.tabId, ref: el.ref, observe: "diff" });
  }

  /** `fill_form` (every field in one call) where the binary has it; else one call per field. */
  async fillForm(fields: FormField[], submit: Addressable): Promise<CallResult[]> {
    if (this.toolNames.has("fill_form")) {
      const filled = await this.call("fill_form", {
        tabId: this.tabId,
        fields: fields.map((f) => ({ ref: f.el.ref, value: f.type === "checkbox" || f.type === "radio" ? true : f.value })),
      });
      return [filled, await this.clickObserve(submit)];
    }
    const out: CallResult[] = [];
    for (const f of fields) {
      if (f.type === "text") out.push(await this.call("fill", { tabId: this.tabId, ref: f.el.ref, value: f.value }));
      else if (f.type === "select") out.push(await this.call("select_option", { tabId: this.tabId, ref: f.el.ref, labels: [f.value] }));
      else out.push(await this.call("click", { tabId: this.tabId, ref: f.el.ref }));
    }
    out.push(await this.clickObserve(submit));
    return out;
  }
}

function tailOf(path: string, n = 3000): string {
  try {
    return readFileSync(path, "utf8").slice(-n);
  } catch {
    return "(none)";
  }
}

function argv0(cmd: string): string {
  return (cmd.split(" ")[0] ?? "").split("/").pop() ?? "";
}

const BROWSER_EXE = /^(chromium|chromium-browser|chrome|google-chrome|google-chrome-stable|headless_shell)$/;

/** A peer's tree: the browser it launched, and the rest (its Node.js server, however it names itself). */
export function peerRole(cmd: string): string {
  return BROWSER_EXE.test(argv0(cmd)) || cmd.includes(" --type=") ? chromeRole(cmd) : "server";
}

function run(cmd: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const t = setTimeout(() => {
      p.kill("SIGKILL");
      reject(new Error(`${cmd} ${args.join(" ")} timed out after ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    p.on("error", (e) => {
      clearTimeout(t);
      reject(e);
    });
    p.on("close", (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Whether a process still runs. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Versions of what is measured, for the report. */
export function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(join(benchDir, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
  } catch {
    return "?";
  }
}

/** The npm package each peer is pinned as (bench/package.json). */
export const PEER_PACKAGE: Record<Exclude<Dialect, "torii" | "toriibefore">, string> = { playwright: "@playwright/mcp", devtools: "chrome-devtools-mcp", agentbrowser: "agent-browser" };


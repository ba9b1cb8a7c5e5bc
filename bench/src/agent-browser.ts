// agent-browser (npm `agent-browser`): a native CDP client. Its package ships one binary per
// platform; `agent-browser mcp` is its MCP stdio server. Each tool call goes from that server to a
// per-session background daemon (detached: its parent is init) that owns the browser.
//
// The harness runs the binary straight from node_modules: bench/.npmrc turns install scripts off,
// so its postinstall (which would only mark the binary executable, repoint a global install's
// symlink, or fetch a binary from GitHub when the package lacks one) never runs, and nothing here
// calls `agent-browser install` (its browser download). The browser is the installed Chromium,
// through AGENT_BROWSER_EXECUTABLE_PATH.
import { accessSync, chmodSync, constants, readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { arch, platform } from "node:os";
import { join } from "node:path";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { COMMON_CHROME_ARGS, benchDir, browserPath, isRoot, pollUntil, removeDir, tempDir } from "./env.ts";
import type { Addressable } from "./fidelity.ts";
import type { MemGroup } from "./metrics.ts";
import { BenchServer, alive, combine, peerRole, type CallResult, type FormField } from "./servers.ts";

/** The platform's binary inside the package, made executable (npm does not keep its mode). */
function binary(): string {
  const a = arch() === "x64" ? "x64" : arch() === "arm64" ? "arm64" : arch();
  const p = join(benchDir, "node_modules", "agent-browser", "bin", `agent-browser-${platform()}-${a}${platform() === "win32" ? ".exe" : ""}`);
  try {
    accessSync(p, constants.X_OK);
  } catch {
    chmodSync(p, 0o755);
  }
  return p;
}

export class AgentBrowserMcp extends BenchServer {
  readonly id = "agentbrowser" as const;
  readonly label = "agent-browser";
  private dir = "";
  private exe = "";
  private daemonPid = 0;

  readonly cheapTool = { name: "agent_browser_get_url", args: () => ({}) };

  async start(): Promise<void> {
    // Its own HOME and cwd: the daemon's socket, its state and config discovery
    // (~/.agent-browser, ./agent-browser.json) and Chromium's crash database stay in a throwaway dir.
    this.dir = await tempDir("tb-ab-");
    this.exe = binary();
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      HOME: this.dir,
      AGENT_BROWSER_EXECUTABLE_PATH: browserPath(),
      AGENT_BROWSER_ARGS: [...COMMON_CHROME_ARGS, ...(isRoot ? ["--no-sandbox"] : [])].join(","),
      // Its outdated-Chrome check fetches a web page; the benchmark's network is loopback only.
      AGENT_BROWSER_NO_VERSION_CHECK: "1",
      // A harness that dies without stop() leaves no daemon behind for long.
      AGENT_BROWSER_IDLE_TIMEOUT_MS: "600000",
    };
    delete env.AGENT_BROWSER_SESSION;
    await this.connect(new StdioClientTransport({ command: this.exe, args: ["mcp"], cwd: this.dir, env, stderr: "pipe" }));
  }

  async stop(): Promise<void> {
    this.findDaemon();
    try {
      await this.call("agent_browser_close", {});
    } catch {
      // never launched, or already gone
    }
    await this.closeClient();
    const pid = this.daemonPid;
    if (pid && alive(pid)) {
      process.kill(pid, "SIGTERM");
      await pollUntil("agent-browser's daemon to exit", () => !alive(pid), 10_000).catch(() => alive(pid) && process.kill(pid, "SIGKILL"));
    }
    await removeDir(this.dir);
  }

  /** The session daemon: this binary, detached, with this run's HOME. */
  private findDaemon(): void {
    if ((this.daemonPid && alive(this.daemonPid)) || !this.exe) return;
    const exe = realpathSync(this.exe);
    for (const d of readdirSync("/proc")) {
      if (!/^\d+$/.test(d) || Number(d) === this.pid) continue;
      try {
        if (readlinkSync(`/proc/${d}/exe`) !== exe) continue;
        if (!readFileSync(`/proc/${d}/environ`, "utf8").split("\0").includes(`HOME=${this.dir}`)) continue;
        this.daemonPid = Number(d);
        return;
      } catch {
        // not ours to read, or ended
      }
    }
  }

  mem(): MemGroup {
    return {
      roots: () => {
        this.findDaemon();
        return [this.pid ?? 0, this.daemonPid].filter(Boolean);
      },
      classify: (cmd) => {
        // Its own processes are the binary (the MCP server, the daemon); the rest is the browser's.
        if (!/^agent-browser-/.test((cmd.split(" ")[0] ?? "").split("/").pop() ?? "")) return peerRole(cmd) === "server" ? "browser:other" : peerRole(cmd);
        return / mcp\b/.test(cmd) ? "mcp" : "daemon";
      },
    };
  }

  navigate(url: string) {
    return this.call("agent_browser_open", { url });
  }

  /**
   * A page that hits its 25 s load limit leaves the tab "wedged" (every later call fails until one
   * times out again): close the browser; the next open launches a fresh one.
   */
  async recover(): Promise<void> {
    await this.call("agent_browser_close", {}).catch(() => undefined);
  }

  /**
   * The whole accessibility tree (`interactive:false`): its default lists interactive elements
   * only, without the page's text, which the other servers' snapshots include. The default's size
   * is kept beside it (one untimed call).
   */
  snapshot(): Promise<CallResult> {
    return this.call("agent_browser_snapshot", { interactive: false });
  }

  /** Characters of its default snapshot (interactive elements only) of the current page. */
  async interactiveChars(): Promise<number> {
    return (await this.call("agent_browser_snapshot", {})).chars;
  }

  /** Its click returns no page state: the agent takes a snapshot to see the result. */
  async clickObserve(el: Addressable): Promise<CallResult> {
    const click = await this.call("agent_browser_click", { selector: `@${el.ref}` });
    return combine("click+snapshot", [click, await this.snapshot()]);
  }

  /** Its default tool profile has no batch form fill: one call per field. */
  async fillForm(fields: FormField[], submit: Addressable): Promise<CallResult[]> {
    const out: CallResult[] = [];
    for (const f of fields) {
      const selector = `@${f.el.ref}`;
      if (f.type === "text") out.push(await this.call("agent_browser_fill", { selector, text: f.value }));
      else if (f.type === "select") out.push(await this.call("agent_browser_select", { selector, values: [f.value] }));
      else if (f.type === "checkbox") out.push(await this.call("agent_browser_check", { selector }));
      else out.push(await this.call("agent_browser_click", { selector }));
    }
    out.push(await this.clickObserve(submit));
    return out;
  }
}

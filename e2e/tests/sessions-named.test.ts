// One daemon per user, found from any environment; named sessions one-shot clients can use.
// A daemon with custom dirs and a managed browser; MCP clients started the way the MCP Inspector
// CLI and the TS SDK's stdio transport start servers (their default environment: no TORII_*
// variables), each making one call in a process of its own.
import { createServer, type Server } from "node:http";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, expect, test } from "vitest";
import { browserPath, toriiBin } from "../src/env.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { killByArg } from "../src/procs.ts";
import { withTimeout } from "../src/util.ts";

interface Call {
  isError: boolean;
  text: string;
  code?: string;
}

/** One MCP call from a process of its own: `torii ARGS` with the SDK's default environment and HOME. */
async function oneShot(home: string, args: string[], tool: string, toolArgs: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<Call> {
  const transport = new StdioClientTransport({ command: toriiBin, args, env: { HOME: home, ...env }, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const client = new Client({ name: "one-shot", version: "0.0.0" });
  try {
    await client.connect(transport);
    const r = (await client.callTool({ name: tool, arguments: toolArgs }, undefined, { timeout: 45_000 })) as {
      isError?: boolean;
      content?: { type: string; text?: string }[];
      structuredContent?: { error?: { code?: string } };
    };
    const text = r.content?.find((c) => c.type === "text")?.text ?? "";
    return { isError: r.isError === true, text, code: r.structuredContent?.error?.code ?? /^([a-z_]+):/.exec(text)?.[1] };
  } catch (e) {
    throw new Error(`torii ${args.join(" ")}: ${String(e)}\nstderr: ${stderr}`);
  } finally {
    await client.close().catch(() => {});
  }
}

/** A page that holds a request open for as long as it lives: its tab's close is seen here. */
async function pageServer(): Promise<{ url: string; closed: Promise<void>; server: Server }> {
  let gone!: () => void;
  const closed = new Promise<void>((r) => (gone = r));
  const server = createServer((req, res) => {
    if (req.url === "/hold") {
      res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store" });
      res.write(": held\n\n");
      req.on("close", () => gone());
      return;
    }
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
    res.end(`<!doctype html><title>named session page</title><h1>kept</h1><script>new EventSource("/hold")</script>`);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const a = server.address();
  if (a === null || typeof a === "string") throw new Error("no port");
  return { url: `http://127.0.0.1:${a.port}/page`, closed, server };
}

/** The tab ids a `tabs` answer lists ("[123] title — url" lines). */
function tabIds(text: string): number[] {
  return [...text.matchAll(/^\[(\d+)\]/gm)].map((m) => Number(m[1]));
}

describeBrowser("named sessions and discovery", () => {
  const rig = useRig();
  let profile: string | undefined;
  let server: Server | undefined;
  afterAll(async () => {
    if (profile) await killByArg(profile);
    server?.close();
  });

  test("clean-environment one-shot clients share a named session's tab across processes and a daemon restart; it closes when the session ends", { timeout: 150_000 }, async () => {
    const torii = await rig.daemon();
    const home = join(torii.root, "home");
    await mkdir(home, { recursive: true, mode: 0o700 });
    // The daemon's discovery record goes where a client with HOME=home looks for it.
    torii.xdgStateHome = join(home, ".local", "state");
    await torii.start();
    profile = join(torii.root, "profile");
    const launched = await torii.cli(["launch", "--browser", browserPath ?? "", "--headless", "--permissive", "--profile", profile], { timeoutMs: 90_000 });
    expect(launched.code, launched.stderr).toBe(0);
    // The printed command carries the dirs, which are not the defaults.
    const printed = /^\s*(\S+ mcp --config-dir \S+ --state-dir \S+) --session NAME$/m.exec(launched.stdout);
    expect(printed, launched.stdout).not.toBeNull();
    const printedArgs = (printed?.[1] ?? "").split(" ").slice(1);
    expect(printedArgs).toEqual(["mcp", "--config-dir", torii.configDir, "--state-dir", torii.stateDir]);

    const page = await pageServer();
    server = page.server;

    // Call 1: found through the discovery record alone (no flags, no variables).
    const nav = await oneShot(home, ["mcp", "--session", "inspector"], "navigate", { url: page.url });
    expect(nav.isError, nav.text).toBe(false);
    // Call 2: the printed command, another process.
    const tabs1 = await oneShot(home, [...printedArgs, "--session", "inspector"], "tabs");
    expect(tabs1.isError, tabs1.text).toBe(false);
    expect(tabs1.text).toContain(page.url);
    const ids = tabIds(tabs1.text);
    expect(ids.length, tabs1.text).toBeGreaterThan(0);

    // Another session's process does not see it.
    const other = await oneShot(home, ["mcp", "--session", "someone-else"], "tabs");
    expect(other.text).not.toContain(page.url);

    // A client talking to another daemon (no browser) is told which daemon to use, not "open Chrome".
    const second = await rig.daemon();
    second.xdgStateHome = torii.xdgStateHome;
    await second.start();
    const wrong = await oneShot(home, ["mcp", "--session", "inspector"], "navigate", { url: page.url }, { TORII_CONFIG_DIR: second.configDir, TORII_STATE_DIR: second.stateDir });
    expect(wrong.code, wrong.text).toBe("wrong_daemon");
    expect(wrong.text).toContain(torii.stateDir);
    await second.stop();

    // The daemon restarts; the extension reconnects; the same name has the same tab.
    await torii.stop();
    await torii.start();
    await torii.waitForLink(true, 30_000);
    const tabs2 = await oneShot(home, ["mcp", "--session", "inspector"], "tabs");
    expect(tabs2.isError, tabs2.text).toBe(false);
    expect(tabs2.text).toContain(page.url);
    expect(tabIds(tabs2.text)).toEqual(ids);

    // Ended on request: its tab in this managed browser closes.
    const page2 = await pageServer();
    const nav2 = await oneShot(home, ["mcp", "--session", "explicit"], "navigate", { url: page2.url });
    expect(nav2.isError, nav2.text).toBe(false);
    const ended = await torii.cli(["exec", "--session", "explicit", "--end"]);
    expect(ended.code, ended.stderr).toBe(0);
    await page2.closed;
    page2.server.close();
    const none = await torii.cli(["exec", "--session", "never-used", "--end"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no named session "never-used"');

    // The session ends when idle (here 1 s): its tab in this managed browser closes.
    await torii.configure({ broker: { sessionIdleSec: 1 } });
    const reload = await torii.cli(["reload"]);
    expect(reload.code, reload.stderr).toBe(0);
    expect(await withTimeout(page.closed.then(() => true), 20_000), "the named session's tab closed").toBe(true);
  });
});

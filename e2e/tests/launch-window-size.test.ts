// Headless sizes: `torii launch --headless` gives agent tabs a 1280×720 viewport (Chromium's own
// headless default left pages 780×437), `--window-size W,H` another one, and a value that is not
// W,H within bounds is a typed error naming the fix before anything starts. Measured as a page
// measures itself: its innerWidth and innerHeight, read back through read_text.
import { type Server, createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { browserPath } from "../src/env.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp } from "../src/mcp.ts";
import { killByArg, pidsWithArg } from "../src/procs.ts";
import { pollUntil, removeDir, shortTempDir } from "../src/util.ts";

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Size</title></head><body>
<p id="size"></p><script>
  const show = () => { document.getElementById("size").textContent = "viewport " + innerWidth + "x" + innerHeight; };
  show();
  addEventListener("resize", show);
</script></body></html>`;

describeBrowser("torii launch --window-size", () => {
  const rig = useRig();
  let server: Server;
  let origin = "";
  const roots: string[] = [];
  const mcps: Mcp[] = [];

  beforeAll(async () => {
    server = createServer((_req, res) => res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(PAGE));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const a = server.address();
    if (!a || typeof a === "string") throw new Error("no port");
    origin = `127.0.0.1:${a.port}`;
  });
  afterAll(async () => {
    for (const m of mcps) await m.close();
    for (const r of roots) {
      await killByArg(join(r, "profile"));
      await removeDir(r);
    }
    await new Promise<void>((r) => server?.close(() => r()));
  });

  /** A headless launch with these flags on a fresh daemon and profile; the viewport an agent's new tab has. */
  async function viewportAfterLaunch(name: string, flags: string[]): Promise<string> {
    const torii = await rig.daemon();
    await torii.start();
    const root = await shortTempDir();
    roots.push(root);
    const profile = join(root, "profile");
    const r = await torii.cli(["launch", "--browser", browserPath ?? "", "--headless", "--profile", profile, "--allow", origin, "--act", ...flags], { timeoutMs: 60_000 });
    if (r.code !== 0) {
      const log = await readFile(join(torii.stateDir, "browser.log"), "utf8").catch(() => "");
      expect.fail(`torii launch exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}\nbrowser.log:\n${log.split("\n").slice(-20).join("\n")}`);
    }
    const mcp = await Mcp.connect(torii, name);
    mcps.push(mcp);
    await mcp.waitForCatalogue();
    // The launch policy lands once the pairing has connected: the first navigate is polled.
    const nav = await pollUntil("the launch policy to be in force", async () => {
      const n = await mcp.call("navigate", { url: `http://${origin}/size` });
      return n.isError ? undefined : n;
    }, { timeoutMs: 20_000, intervalMs: 250 });
    const text = (await mcp.ok("read_text", { tabId: nav.data.tabId })).text;
    await killByArg(profile);
    return /viewport (\d+x\d+)/.exec(text)?.[1] ?? text;
  }

  test("headless by default: an agent's tab is 1280×720", { timeout: 60_000 }, async () => {
    expect(await viewportAfterLaunch("size-default", [])).toBe("1280x720");
  });

  test("--window-size 1600,900: an agent's tab is 1600×900", { timeout: 60_000 }, async () => {
    expect(await viewportAfterLaunch("size-1600", ["--window-size", "1600,900"])).toBe("1600x900");
  });

  test("a value that is not W,H in bounds: a typed error naming the fix, and nothing started", { timeout: 30_000 }, async () => {
    const torii = await rig.daemon();
    const root = await shortTempDir();
    roots.push(root);
    const profile = join(root, "profile");
    for (const [value, words] of [
      ["1280x720", "did you mean --window-size 1280,720?"],
      ["1280", "give two whole numbers separated by a comma"],
      ["100,720", "the width 100 is outside 200..7680"],
      ["1280,99999", "the height 99999 is outside 200..4320"],
      ["wide,720", 'the width "wide" is not a whole number'],
    ] as const) {
      const r = await torii.cli(["launch", "--browser", browserPath ?? "", "--headless", "--profile", profile, "--window-size", value], { timeoutMs: 20_000 });
      expect(r.code, `${value}: ${r.stdout}\n${r.stderr}`).toBe(1);
      expect(r.stderr).toContain(`--window-size "${value}"`);
      expect(r.stderr).toContain(words);
      expect(r.stderr).toContain("fix: ");
    }
    expect(await pidsWithArg(profile)).toEqual([]);
    expect(await torii.healthzOrNull()).toBeUndefined();
  });
});

// A configured default agent whose command does not exist: the side panel says so, naming the
// config.json key to fix, instead of silently never starting it.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, test } from "vitest";
import { pairBrowser } from "../src/browser.ts";
import { EXTENSION_ORIGIN } from "../src/env.ts";
import { describeBrowser, useRig } from "../src/harness.ts";

describeBrowser("side panel with a missing agent", () => {
  const rig = useRig();

  test("the default agent's missing command is reported with the config key to fix", { timeout: 120_000 }, async () => {
    const torii = await rig.daemon();
    const cfgPath = join(torii.configDir, "config.json");
    const cfg = JSON.parse(await readFile(cfgPath, "utf8")) as Record<string, unknown>;
    cfg.agents = [{ name: "ghost", command: "torii-no-such-agent" }];
    await writeFile(cfgPath, JSON.stringify(cfg) + "\n", { mode: 0o600 });
    await torii.start();
    const browser = await rig.browser();
    const { popup } = await pairBrowser(browser, torii);
    const windowId = await popup.evaluate(async () => {
      const c = (globalThis as unknown as { chrome: { windows: { getCurrent(): Promise<{ id: number }> } } }).chrome;
      return (await c.windows.getCurrent()).id;
    });
    const panel = await browser.context.newPage();
    await panel.goto(`${EXTENSION_ORIGIN}/sidepanel.html?window=${windowId}`);
    await panel.waitForFunction(() => document.body.dataset.ready === "true");
    const transcript = panel.getByTestId("transcript");
    await expect
      .poll(async () => (await transcript.textContent()) ?? "", { timeout: 20_000 })
      .toContain("The default agent ghost is not installed");
    const text = (await transcript.textContent()) ?? "";
    expect(text).toContain('command "torii-no-such-agent" (agents[0].command) is not found on PATH');
    expect(text).toContain("fix agents[0].command in config.json");
    // And `torii status` says the same.
    const st = await torii.cli(["status"]);
    expect(st.stdout).toContain("ghost");
    expect(st.stdout).toContain("not_installed");
    expect(st.stdout).toContain("agents[0].command");
  });
});

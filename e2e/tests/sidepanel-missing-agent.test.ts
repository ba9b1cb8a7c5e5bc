// A configured default agent whose command does not exist: the side panel says so, naming the
// config.json key to fix, instead of silently never starting it.
import { expect, test } from "vitest";
import { pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { openPanel, windowOf } from "../src/panel.ts";

describeBrowser("side panel with a missing agent", () => {
  const rig = useRig();

  test("the default agent's missing command is reported with the config key to fix", { timeout: 120_000 }, async () => {
    const torii = await rig.daemon();
    await torii.configure({ agents: [{ name: "ghost", command: "torii-no-such-agent" }] });
    await torii.start();
    const browser = await rig.browser();
    const { popup } = await pairBrowser(browser, torii);
    const panel = await openPanel(browser.context, await windowOf(popup));
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

// What console and network capture add to an action's latency (not part of `make test`): the same
// click with observe "diff" on two tabs of the same fixture page, one being captured
// (console_tail and network_tail called on it) and one not, interleaved, alternating which goes
// first, so machine load falls on both alike. The button logs an error and fetches JSON, so the
// captured tab has console events and a judged network entry per click (and a body read with
// BENCH_BODIES=1, which turns the Network domain on).
import { appendFileSync } from "node:fs";
import { expect, test } from "vitest";
import { closeWebPages, pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp, refOf } from "../src/mcp.ts";
import { ObserveSite } from "../src/observe-site.ts";
import { setPolicy } from "../src/safety.ts";

const REPS = Math.max(1, Number(process.env.BENCH_REPS ?? 30));
/** BENCH_BODIES=1: the captured tabs record response bodies too (network_tail bodies: true). */
const BODIES = process.env.BENCH_BODIES === "1";
/** BENCH_OUT=file: each run's raw times are appended there (one JSON line), to pool several runs. */
const OUT = process.env.BENCH_OUT;

const med = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.floor((s.length - 1) / 2)] as number) : NaN;
};

describeBrowser("bench: capture cost per click-and-observe", () => {
  const rig = useRig();

  test("click + diff on a captured tab vs an uncaptured one", { timeout: 30 * 60_000 }, async () => {
    const torii = await rig.daemon();
    await torii.configure({ broker: { toolGroups: ["devtools"] } }); // console_tail and network_tail are in this group
    await torii.start();
    const browser = await rig.browser();
    const { popup } = await pairBrowser(browser, torii);
    const site = await ObserveSite.start();
    const mcp = await Mcp.connect(torii, "observe-bench");
    try {
      await mcp.waitForCatalogue();
      await closeWebPages(browser);
      await setPolicy(popup, { rules: [{ pattern: site.aPattern, act: true, observe: true }], actMode: true });
      const open = async () => {
        const r = await mcp.ok("navigate", { url: `${site.a}/page`, observe: "snapshot" });
        return { tabId: r.data.tabId as number, ref: refOf(r.text, "button", "Work") };
      };
      // Four tabs, captured ones first and last, so which tab the window shows (the first) and the
      // order they were opened in fall on both kinds alike.
      const tabs = [await open(), await open(), await open(), await open()];
      const kinds = ["on", "off", "off", "on"] as const;
      for (const [i, x] of tabs.entries()) {
        if (kinds[i] !== "on") continue;
        await mcp.ok("console_tail", { tabId: x.tabId });
        await mcp.ok("network_tail", { tabId: x.tabId, ...(BODIES ? { bodies: true } : {}) });
      }
      const t = { off: [] as number[], on: [] as number[] };
      const per: number[][] = [[], [], [], []];
      const click = async (i: number) => {
        const x = tabs[i] as { tabId: number; ref: string };
        return (await mcp.ok("click", { tabId: x.tabId, ref: x.ref, observe: "diff" })).ms;
      };
      for (let i = 0; i < 4; i++) await click(i);
      for (let r = 0; r < REPS; r++) {
        // Rotate which tab goes first each round.
        for (let k = 0; k < 4; k++) {
          const i = (r + k) % 4;
          const ms = await click(i);
          t[kinds[i] as "on" | "off"].push(ms);
          per[i]?.push(ms);
        }
      }
      const on = tabs[0] as { tabId: number };
      const kept = await mcp.ok("network_tail", { tabId: on.tabId, limit: 500, ...(BODIES ? { bodies: true } : {}) });
      const a = med(t.off);
      const b = med(t.on);
      console.log(
        `\nclick + diff${BODIES ? " (bodies on)" : ""}, ${REPS} rounds over 2 captured and 2 uncaptured tabs: p50 without capture ${a.toFixed(1)} ms, with capture ${b.toFixed(1)} ms (${(((b - a) / a) * 100).toFixed(1)}%); ` +
          `captured ${(kept.data.entries as unknown[]).length} responses; p50 per tab in the order opened: ${per.map((x, i) => `${kinds[i]} ${med(x).toFixed(1)}`).join(", ")}\n`,
      );
      if (OUT) appendFileSync(OUT, `${JSON.stringify({ bodies: BODIES, off: t.off, on: t.on })}\n`);
      expect(t.on.length).toBe(2 * REPS);
    } finally {
      await mcp.close();
      await site.close();
    }
  });
});

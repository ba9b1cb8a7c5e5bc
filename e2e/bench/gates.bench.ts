// What the per-call gates cost on the fixture pages (`make bench-tools`; not part of `make test`):
// actions with observe on form.html and a cross-origin iframes page, through the real path. Every
// action passes the gate, the effect guard and the landing check; run this against two builds
// (TORII_BIN / TORII_EXTENSION_DIR) one after the other, alternating, to compare them.
import { expect, test } from "vitest";
import { describeBrowser } from "../src/harness.ts";
import { refOf } from "../src/mcp.ts";
import { useToolsRig } from "../src/tools-rig.ts";

const REPS = Math.max(1, Number(process.env.BENCH_REPS ?? 20));

const med = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.floor((s.length - 1) / 2)] as number) : NaN;
};

describeBrowser("bench: gate cost per action", () => {
  const rig = useToolsRig();

  test("click, mouse_click, type, press_key, fill with observe on the fixture pages", { timeout: 30 * 60_000 }, async () => {
    const { mcp } = rig();
    const times = new Map<string, number[]>();
    const add = (k: string, ms: number) => (times.get(k) ?? times.set(k, []).get(k)!).push(ms);
    const { tabId } = await rig().open("form.html");
    const snap = (await mcp.ok("snapshot", { tabId })).text;
    const news = refOf(snap, "checkbox", "Send me news");
    const name = refOf(snap, "textbox", "Full name");
    const bio = refOf(snap, "textbox", "About you");
    for (let i = 0; i < REPS; i++) {
      add("click + diff", (await mcp.ok("click", { tabId, ref: news, observe: "diff" })).ms);
      add("mouse_click + diff", (await mcp.ok("mouse_click", { tabId, ref: news, observe: "diff" })).ms);
      add("type 8 keys + diff", (await mcp.ok("type", { tabId, ref: name, text: "abcdefgh", keys: true, observe: "diff" })).ms);
      add("press_key Tab + diff", (await mcp.ok("press_key", { tabId, ref: bio, key: "Tab", observe: "diff" })).ms);
      add("fill + diff", (await mcp.ok("fill", { tabId, ref: bio, value: `text ${i}`, observe: "diff" })).ms);
    }
    const frames = await rig().open(`iframes.html?x=${rig().site.crossPort}`);
    const fsnap = (await mcp.ok("snapshot", { tabId: frames.tabId })).text;
    const btn = [...fsnap.matchAll(/button "([^"]+)" \[ref=(e\d+)\]/g)][0];
    for (let i = 0; i < REPS && btn; i++) {
      add("iframes page: mouse_click + diff", (await mcp.ok("mouse_click", { tabId: frames.tabId, ref: btn[2], observe: "diff" })).ms);
      add("iframes page: snapshot", (await mcp.ok("snapshot", { tabId: frames.tabId })).ms);
    }
    const lines = [`Torii gate cost bench — ${REPS} repetition(s); MCP client round trips, p50 ms`, "", "| action | p50 ms |", "|---|---|"];
    for (const [k, v] of times) lines.push(`| ${k} | ${med(v).toFixed(1)} |`);
    console.log("\n" + lines.join("\n") + "\n");
    expect(times.get("click + diff")?.length).toBe(REPS);
  });
});

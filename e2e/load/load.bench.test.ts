// The load benchmark (`make bench-load`): 8 concurrent agent sessions (`torii mcp`
// processes), each driving its own tab through 200 mixed calls (snapshot, click, fill,
// read_text) against one real headless Chromium and one daemon. Reports throughput, per-call
// latency (median, p95, p99), queue waits, the daemon's RSS idle and peak, misrouted/lost
// responses and fairness; writes bench/results/load.json. Targets: 0 misrouted or lost; no
// session's median wait > 2x another's (or > 5 ms apart); RSS <= 60 MB under load, <= 25 MB idle.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";
import { pairBrowser } from "../src/browser.ts";
import { repoRoot } from "../src/env.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp, type ToolResult } from "../src/mcp.ts";
import { Site } from "../src/site.ts";
import { allowEverything } from "../src/tools-rig.ts";

const SESSIONS = Number(process.env.LOAD_SESSIONS ?? 8);
const CALLS = Number(process.env.LOAD_CALLS ?? 200);

function rssKB(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : NaN;
}
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))] ?? NaN;
};
const r1 = (x: number) => Math.round(x * 10) / 10;

describeBrowser("load", () => {
  const rig = useRig();

  test(`${SESSIONS} sessions x ${CALLS} mixed calls`, async () => {
    const torii = await rig.daemon();
    await torii.start();
    const browser = await rig.browser();
    const { popup } = await pairBrowser(browser, torii);
    await allowEverything(popup);
    const site = await Site.start();
    const pid = (await torii.cliJSON<{ pid: number }>(["status", "--json"])).pid;

    const clients: Mcp[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const m = await Mcp.connect(torii, `load-${i}`);
      await m.waitForCatalogue();
      clients.push(m);
    }
    const tabs: number[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      tabs.push((await clients[i]!.ok("navigate", { url: site.url(`session.html?id=L${i}`) })).data.tabId as number);
    }
    await new Promise((r) => setTimeout(r, 1_000));
    const idleKB = rssKB(pid, "VmRSS");

    const lat: number[] = [];
    const waits: number[][] = clients.map(() => []);
    let misrouted = 0;
    let lost = 0;
    let errors = 0;
    const clicks = clients.map(() => 0);
    const kinds = ["snapshot", "click", "fill", "read_text"] as const;
    const t0 = performance.now();
    await Promise.all(
      clients.map(async (m, i) => {
        const me = `Owner L${i}`;
        for (let k = 0; k < CALLS; k++) {
          const kind = kinds[k % kinds.length]!;
          const args: Record<string, unknown> =
            kind === "click" ? { tabId: tabs[i], selector: "#bump" } : kind === "fill" ? { tabId: tabs[i], selector: "#field", value: `L${i}-${k}` } : { tabId: tabs[i] };
          let r: ToolResult;
          try {
            r = await m.call(kind, args, 60_000);
          } catch {
            lost++;
            continue;
          }
          lat.push(r.ms);
          if (r.isError) {
            errors++;
            continue;
          }
          if (kind === "click") clicks[i]!++;
          if ((kind === "snapshot" || kind === "read_text") && !r.text.includes(me)) misrouted++;
        }
      }),
    );
    const wallMs = performance.now() - t0;
    const peakKB = rssKB(pid, "VmHWM");

    // Every click landed on its caller's own tab: the counter on each page equals the clicks sent.
    for (let i = 0; i < SESSIONS; i++) {
      const t = await clients[i]!.ok("read_text", { tabId: tabs[i] });
      const m = /Clicks:\s*(\d+)/.exec(t.text);
      if (!m || Number(m[1]) !== clicks[i]) misrouted++;
      // Queue waits from the daemon (the latest calls of each session).
      const st = (await clients[i]!.ok("status")).data.session as { recent: { waitMs: number }[] };
      waits[i] = st.recent.map((x) => x.waitMs);
    }
    const medWaits = waits.map((w) => pct(w, 50));
    const total = SESSIONS * CALLS;
    const report = {
      sessions: SESSIONS,
      callsPerSession: CALLS,
      calls: total,
      wallSeconds: r1(wallMs / 1000),
      throughputPerSecond: r1(total / (wallMs / 1000)),
      latencyMs: { median: r1(pct(lat, 50)), p95: r1(pct(lat, 95)), p99: r1(pct(lat, 99)) },
      queueWaitMs: { medianPerSession: medWaits, p95: pct(waits.flat(), 95), max: Math.max(...waits.flat()) },
      daemonRssMB: { idle: r1(idleKB / 1024), peak: r1(peakKB / 1024) },
      misrouted,
      lost,
      errors,
      fair: Math.max(...medWaits) <= Math.max(2 * Math.min(...medWaits), Math.min(...medWaits) + 5),
    };
    console.log(`load: ${JSON.stringify(report, null, 2)}`);
    const dir = join(repoRoot, "bench", "results");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "load.json"), `${JSON.stringify(report, null, 2)}\n`);

    for (const c of clients) await c.close();
    await site.close();
    expect(misrouted, "results from another session's tab").toBe(0);
    expect(lost, "calls that never got an answer").toBe(0);
    expect(report.fair, `median queue waits ${medWaits.join(", ")} ms`).toBe(true);
  });
});

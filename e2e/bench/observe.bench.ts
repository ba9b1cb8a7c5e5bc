// What console and network capture add to an action's latency (not part of `make test`): the same
// click with observe "diff" on tabs of the same fixture page, half of them captured
// (console_tail and network_tail called on them) and half not, interleaved, rotating which goes
// first, so machine load falls on both alike. The button logs an error and fetches JSON, so the
// captured tab has console events and a judged network entry per click (and a body read with
// BENCH_BODIES=1, which turns the Network domain on).
import { appendFileSync, writeFileSync } from "node:fs";
import { expect, test } from "vitest";
import { closeWebPages, pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp, refOf } from "../src/mcp.ts";
import { ObserveSite } from "../src/observe-site.ts";
import { setPolicy } from "../src/safety.ts";

const REPS = Math.max(1, Number(process.env.BENCH_REPS ?? 30));
/** BENCH_BODIES=1: the captured tabs record response bodies too (network_tail bodies: true). */
const BODIES = process.env.BENCH_BODIES === "1";
/** BENCH_ASK=1: every approval kind "ask", as a fresh install has it (the clicks themselves need none). */
const ASK = process.env.BENCH_ASK === "1";
/** BENCH_OUT=file: each run's raw times are appended there (one JSON line), to pool several runs. */
const OUT = process.env.BENCH_OUT;
/**
 * BENCH_PROFILE=file.cpuprofile: the service worker's CPU profile of the phase with capture on, and
 * of the phase before it in file.before.cpuprofile (their difference is what capture costs the worker).
 */
const PROFILE = process.env.BENCH_PROFILE;

/** Starts the V8 profiler in the extension's service worker; the returned function stops it. */
async function profileWorker(browser: Awaited<ReturnType<ReturnType<typeof useRig>["browser"]>>): Promise<() => Promise<unknown>> {
  const b = browser.context.browser();
  if (!b) throw new Error("no browser handle");
  const s = await b.newBrowserCDPSession();
  const targetId = await browser.worker();
  const { sessionId } = (await s.send("Target.attachToTarget", { targetId, flatten: false })) as { sessionId: string };
  let id = 0;
  const waiting = new Map<number, (r: unknown) => void>();
  s.on("Target.receivedMessageFromTarget", (e: { message: string }) => {
    const m = JSON.parse(e.message) as { id?: number; result?: unknown };
    if (m.id !== undefined) waiting.get(m.id)?.(m.result);
  });
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((r) => {
      waiting.set(++id, r);
      void s.send("Target.sendMessageToTarget", { sessionId, message: JSON.stringify({ id, method, params }) });
    });
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 100 });
  await send("Profiler.start");
  return async () => ((await send("Profiler.stop")) as { profile: unknown }).profile;
}

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
      const ask = { submit: "ask", destructive_click: "ask", new_origin: "ask", evaluate: "ask", upload: "ask", download: "ask" };
      await setPolicy(popup, { rules: [{ pattern: site.aPattern, act: true, observe: true }], actMode: true, ...(ASK ? { approvals: ask } : {}) });
      const open = async () => {
        const r = await mcp.ok("navigate", { url: `${site.a}/page`, newTab: true, observe: "snapshot" });
        return { tabId: r.data.tabId as number, ref: refOf(r.text, "button", "Work") };
      };
      // Tab to tab, p50s differ by as much as the cost measured (one tab is often ~5 ms slower than the
      // rest, captured or not), so each tab is compared with itself: every
      // tab is clicked REPS rounds with nothing captured, then capture starts on half of them and
      // every tab is clicked REPS rounds more. The cost is how much the captured tabs slowed from
      // one phase to the next beyond what the uncaptured ones did (the machine's drift), relative
      // to the captured tabs' own first phase.
      const kinds = ["on", "off", "off", "on", "off", "on", "on", "off"] as const;
      const tabs: { tabId: number; ref: string }[] = [];
      for (const _ of kinds) tabs.push(await open());
      const click = async (i: number) => {
        const x = tabs[i] as { tabId: number; ref: string };
        return (await mcp.ok("click", { tabId: x.tabId, ref: x.ref, observe: "diff" })).ms;
      };
      const phase = async () => {
        const per: number[][] = kinds.map(() => []);
        for (let r = 0; r < REPS; r++) {
          // Rotate which tab goes first each round.
          for (let k = 0; k < tabs.length; k++) {
            const i = (r + k) % tabs.length;
            per[i]?.push(await click(i));
          }
        }
        return per;
      };
      for (let i = 0; i < tabs.length; i++) await click(i);
      const stopBefore = PROFILE ? await profileWorker(browser) : undefined;
      const before = await phase();
      if (stopBefore) writeFileSync((PROFILE as string).replace(/(\.cpuprofile)?$/, ".before.cpuprofile"), JSON.stringify(await stopBefore()));
      const captured = tabs.filter((_, i) => kinds[i] === "on");
      for (const x of captured) {
        await mcp.ok("console_tail", { tabId: x.tabId });
        await mcp.ok("network_tail", { tabId: x.tabId, ...(BODIES ? { bodies: true } : {}) });
      }
      const stopProfile = PROFILE ? await profileWorker(browser) : undefined;
      const after = await phase();
      if (stopProfile) writeFileSync(PROFILE as string, JSON.stringify(await stopProfile()));
      const kept = await mcp.ok("network_tail", { tabId: (captured[0] as { tabId: number }).tabId, limit: 500, ...(BODIES ? { bodies: true } : {}) });
      const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / xs.length;
      const of = (kind: string, per: number[][]) => mean(per.flatMap((x, i) => (kinds[i] === kind ? [med(x)] : [])));
      const slowed = (kind: string) => of(kind, after) - of(kind, before);
      const cost = slowed("on") - slowed("off");
      const base = of("on", before);
      console.log(
        `\nclick + diff${BODIES ? " (bodies on)" : ""}, ${REPS} rounds × 8 tabs before and after capture started on 4 of them: ` +
          `captured tabs ${base.toFixed(1)} → ${of("on", after).toFixed(1)} ms, uncaptured ${of("off", before).toFixed(1)} → ${of("off", after).toFixed(1)} ms; ` +
          `capture adds ${cost.toFixed(2)} ms (${((cost / base) * 100).toFixed(1)}%); captured ${(kept.data.entries as unknown[]).length} responses; ` +
          `p50 per tab before → after: ${kinds.map((k, i) => `${k} ${med(before[i] as number[]).toFixed(1)}→${med(after[i] as number[]).toFixed(1)}`).join(", ")}\n`,
      );
      if (OUT) appendFileSync(OUT, `${JSON.stringify({ bodies: BODIES, kinds, before, after })}\n`);
      expect((kept.data.entries as unknown[]).length).toBeGreaterThan(0);
    } finally {
      await mcp.close();
      await site.close();
    }
  });
});

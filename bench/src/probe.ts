// `npm --prefix bench run probe`: Torii alone, a quick look at where the first snapshot of a new
// document goes, without the peers. Per small page, on fresh documents in the same tab:
//   navigate        the call
//   first snapshot  right after it (what the round measures)
//   after a pause   the first snapshot of another fresh document, taken PROBE_PAUSE_MS after its
//                   navigate returned: what is left once the browser's own after-load work is done
//   second          a second snapshot of that same document: the engine's setup already paid
//   in extension    the snapshot tool's own time (its stats.ms), the rest being the call's path
// then the cheapest tool (`tabs`) and an MCP ping, p50 and p95. PROBE_REPS (default 9), TORII_BIN.
import { Fixtures, SMALL_PAGES, TABLE_PAGES } from "./fixtures.ts";
import { ToriiMcp } from "./servers.ts";
import { summarize } from "./metrics.ts";

const reps = Number(process.env.PROBE_REPS ?? 9);
const pauseMs = Number(process.env.PROBE_PAUSE_MS ?? 300);
const med = (xs: number[]) => (xs.length ? summarize(xs).median : NaN);
const f = (x: number) => x.toFixed(1).padStart(6);

/** The snapshot tool's own time, as it reports it in structuredContent (stats.ms). */
function ownMs(r: { structured?: unknown }): number {
  const ms = (r.structured as { stats?: { ms?: unknown } } | undefined)?.stats?.ms;
  return typeof ms === "number" ? ms : NaN;
}

const fx = new Fixtures();
await fx.start();
const t = process.env.TORII_BIN ? new ToriiMcp(process.env.TORII_BIN) : new ToriiMcp();
try {
  await t.start();
  await t.navigate(fx.url("/table.html?rows=1"));
  const stamp = Date.now().toString(36);
  console.log(`median ms over ${reps} fresh documents per column (pause ${pauseMs} ms)`);
  console.log(`${"page".padEnd(16)} navigate  first  in ext  paused  second`);
  for (const page of [...SMALL_PAGES, TABLE_PAGES[0]!]) {
    const nav: number[] = [], first: number[] = [], own: number[] = [], paused: number[] = [], second: number[] = [];
    for (let i = -1; i < reps; i++) {
      const n = await t.navigate(fx.url(page, `probe=${stamp}-${i}a`));
      const s1 = await t.call("snapshot", { tabId: t.tabId, maxChars: ToriiMcp.SNAPSHOT_PAGE });
      await t.navigate(fx.url(page, `probe=${stamp}-${i}b`));
      await new Promise((r) => setTimeout(r, pauseMs));
      const s2 = await t.snapshot();
      const s3 = await t.snapshot();
      if (i < 0) continue;
      nav.push(n.ms);
      first.push(s1.ms);
      own.push(ownMs(s1));
      paused.push(s2.ms);
      second.push(s3.ms);
    }
    console.log(`${page.id.padEnd(16)} ${f(med(nav))}  ${f(med(first))}  ${f(med(own))}  ${f(med(paused))}  ${f(med(second))}`);
  }
  const tabs: number[] = [], ping: number[] = [];
  for (let i = 0; i < 220; i++) {
    const r = await t.call("tabs", {});
    const p = await t.ping();
    if (i < 20) continue;
    tabs.push(r.ms);
    ping.push(p);
  }
  const ts = summarize(tabs), ps = summarize(ping);
  console.log(`tabs p50 ${ts.median.toFixed(2)} ms, p95 ${ts.p95.toFixed(2)} ms; MCP ping p50 ${ps.median.toFixed(2)} ms, p95 ${ps.p95.toFixed(2)} ms`);
} finally {
  await t.stop();
  await fx.stop();
}
process.exit(0);

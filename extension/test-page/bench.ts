// Micro-benchmark of the page engine's snapshot on table.html with 100 / 1,000 / 10,000 rows, or
// on the pages named in URLS= (e.g. URLS=bench/checkout.html,bench/app.html: the benchmark's pages).
// Prints, per size: in-page ms (median, p95), end-to-end ms through page.evaluate (median, p95)
// and the outline's size in characters. Not a test: numbers, not assertions.
//   RUNS=9 node <bundled bench> (see README.md in this folder)
import { call, open, setup } from "./harness";

const RUNS = Number(process.env.RUNS ?? 5);
const SIZES = (process.env.SIZES ?? "100,1000,10000").split(",").map(Number);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] as number;
}

const env = await setup();
try {
  console.log(`runs per size: ${RUNS} (after 1 warm-up); fresh snapshot each run`);
  console.log("rows\tin-page min\tp50\tp95\te2e p50\tp95\tchars\tlines\tnodes\trefs");
  const urls = process.env.URLS ? process.env.URLS.split(",") : SIZES.map((rows) => `table.html?rows=${rows}`);
  for (const url of urls) {
    const rows = url;
    const page = await open(env, url);
    const inPage: number[] = [];
    const e2e: number[] = [];
    let chars = 0;
    let lines = 0;
    let nodes = 0;
    let refs = 0;
    for (let i = 0; i <= RUNS; i++) {
      const t0 = performance.now();
      const r = await call<any>(page, "snapshot", {});
      const t1 = performance.now();
      if (!r.ok) throw new Error(JSON.stringify(r.error));
      refs = (r.value.text.match(/\[[a-gi-z]+\d+\]/g) ?? []).length;
      if (i === 0) continue; // warm-up: first run also assigns every ref
      inPage.push(r.value.stats.ms);
      e2e.push(t1 - t0);
      chars = r.value.stats.chars;
      lines = r.value.stats.lines;
      nodes = r.value.stats.nodes;
    }
    const f = (n: number) => n.toFixed(1);
    console.log(`${rows}\t${f(Math.min(...inPage))}\t\t${f(pct(inPage, 50))}\t${f(pct(inPage, 95))}\t${f(pct(e2e, 50))}\t${f(pct(e2e, 95))}\t${chars}\t${lines}\t${nodes}\t${refs}`);
    await page.close();
  }
} finally {
  await env.close();
}

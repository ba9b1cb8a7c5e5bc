// Micro-benchmark of the page engine's snapshot on table.html with 100 / 1,000 / 10,000 rows, or
// on the pages named in URLS= (e.g. URLS=bench/checkout.html,bench/app.html: the benchmark's pages).
// Prints, per size: in-page ms (median, p95), end-to-end ms through page.evaluate (median, p95)
// and the outline's size in characters. Then what masking the person's secrets costs a snapshot
// (SECURITY I-77), interleaved on the same page: the in-page time with two secrets bound to the
// page's origin against none (median of paired differences), and the worker's mask over the
// snapshot's text. Not a test: numbers, not assertions.
//   RUNS=9 node <bundled bench> (see README.md in this folder)
import { call, open, setup } from "./harness";
import { compileMask } from "../src/secrets/mask";

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
  const masks: string[] = [];
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
    masks.push(await maskCost(page, rows));
    await page.close();
  }
  console.log("\nmasking two secrets (SECURITY I-77), medians of paired runs in ms");
  console.log("page\tin-page none\twith\tpaired diff\tworker mask of the text");
  for (const m of masks) console.log(m);
} finally {
  await env.close();
}

/** In-page snapshot with and without two secrets bound to the page (interleaved), and the worker's pass. */
async function maskCost(page: Awaited<ReturnType<typeof open>>, label: string): Promise<string> {
  const entries = [
    { name: "pw", values: ['Zq7 "k&m+t/ w@V9xé'] },
    { name: "key", values: ["sk_live_4eC39HqLyjWDarjtT1zdp7dc"] },
  ];
  const mask = { k: "bench", e: entries };
  const none: number[] = [];
  const withMask: number[] = [];
  const diff: number[] = [];
  let text = "";
  for (let i = 0; i <= RUNS; i++) {
    const a = await call<any>(page, "snapshot", {});
    const b = await call<any>(page, "snapshot", { mask });
    if (!a.ok || !b.ok) throw new Error("snapshot failed");
    if (i === 0) continue;
    none.push(a.value.stats.ms);
    withMask.push(b.value.stats.ms);
    diff.push(b.value.stats.ms - a.value.stats.ms);
    text = a.value.text;
  }
  const m = compileMask(entries);
  const worker: number[] = [];
  for (let i = 0; i < Math.max(RUNS, 5); i++) {
    const t0 = performance.now();
    m.deep({ text, data: { text } });
    worker.push(performance.now() - t0);
  }
  const f = (n: number) => n.toFixed(2);
  return `${label}\t${f(pct(none, 50))}\t${f(pct(withMask, 50))}\t${f(pct(diff, 50))}\t${f(pct(worker, 50))} (${text.length} chars)`;
}

// CPU profile of the page engine's snapshot (CDP Profiler, 50 µs sampling) on one page: self time
// per function over 40 snapshots after 3 warm-ups. Not a test.
//   URLS=bench/checkout.html node <bundled cpuprof> (see README.md in this folder)
import { open, setup } from "./harness";
const env = await setup();
const url = process.env.URLS ?? "bench/dashboard.html";
const page = await open(env, url);
const cdp = await page.context().newCDPSession(page);
await cdp.send("Profiler.enable");
await cdp.send("Profiler.setSamplingInterval", { interval: 50 });
for (let i = 0; i < 3; i++) await page.evaluate(() => (globalThis as any).__torii.call("snapshot", { origin: self.origin, refTag: "qq" }));
await cdp.send("Profiler.start");
for (let i = 0; i < 40; i++) await page.evaluate(() => (globalThis as any).__torii.call("snapshot", { origin: self.origin, refTag: "qq" }));
const { profile } = (await cdp.send("Profiler.stop")) as any;
const selfT = new Map<string, number>();
const byId = new Map<number, any>();
for (const n of profile.nodes) byId.set(n.id, n);
const dt = profile.timeDeltas as number[];
const counts = new Map<number, number>();
(profile.samples as number[]).forEach((s, i) => counts.set(s, (counts.get(s) ?? 0) + (dt[i] ?? 0)));
for (const [id, us] of counts) {
  const n = byId.get(id);
  const k = `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.split("/").pop()}:${n.callFrame.lineNumber}`;
  selfT.set(k, (selfT.get(k) ?? 0) + us);
}
const total = [...selfT.values()].reduce((a, b) => a + b, 0);
console.log("total ms", (total / 1000).toFixed(1));
for (const [k, us] of [...selfT].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log((us / 1000).toFixed(1).padStart(7), ((100 * us) / total).toFixed(1).padStart(5) + "%", k);
await env.close();

// The report: a markdown table for BENCHMARKS.md and a PNG chart, rendered as SVG by hand and
// rasterised by the installed Chromium (playwright-core; no browser download, no native build).
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { chromium } from "playwright-core";
import { COMMON_CHROME_ARGS, browserPath, isRoot } from "./env.ts";
import type { Dialect } from "./fidelity.ts";
import { summarize, type MemPeak } from "./metrics.ts";
import type { PerServer, RoundStats, Series, SnapshotStats, TaskStats } from "./scenarios.ts";

export interface ServerInfo {
  label: string;
  version: string;
  tools: number;
  toolsListChars: number;
  /** The server's `instructions` (absent in results from before it was measured). */
  instructionsChars?: number;
}

export interface RunResult {
  meta: {
    date: string;
    smoke: boolean;
    reps: number;
    machine: { cpu: string; cores: number; memGiB: number; os: string; kernel: string };
    /** 1/5/15-minute load averages when the run started and ended (other work on the machine skews latency). */
    load: { start: number[]; end: number[] };
    node: string;
    chromium: string;
    tokenizer: string;
    servers: PerServer<ServerInfo>;
    notes: string[];
  };
  snapshot: Record<string, { title: string; res: PerServer<SnapshotStats> }>;
  /** navigate → first snapshot → click and observe on fresh documents, per page (id → results). */
  rounds?: Record<string, { title: string; small: boolean; res: PerServer<RoundStats> }>;
  navigate?: { page: string; res: PerServer<Series> };
  click?: { page: string; res: PerServer<TaskStats> };
  form?: { page: string; fields: number; res: PerServer<TaskStats> };
  /** The cheapest tool's round trip and an MCP ping beside it, per server. */
  cheap?: PerServer<{ tool: string; ms: number[]; pingMs: number[] }>;
  memory: PerServer<MemPeak>;
}

const ORDER: Dialect[] = ["torii", "toriibefore", "playwright", "devtools", "agentbrowser"];
const PEERS: Dialect[] = ["playwright", "devtools", "agentbrowser"];
const COLORS: Record<Dialect, string> = { torii: "#c0392b", toriibefore: "#f1948a", playwright: "#2e86c1", devtools: "#27ae60", agentbrowser: "#8e44ad" };
const SHORT: Record<Dialect, string> = { torii: "Torii", toriibefore: "Torii before", playwright: "Playwright", devtools: "DevTools", agentbrowser: "agent-browser" };
const TITLE = "Torii vs Playwright MCP vs Chrome DevTools MCP vs agent-browser";
/** The small realistic pages, where most agent work happens. */
const SMALL_PAGES = ["checkout", "dashboard", "app", "article"];

const med = (xs: number[] | undefined) => (xs?.length ? summarize(xs).median : NaN);
const p95 = (xs: number[] | undefined) => (xs?.length ? summarize(xs).p95 : NaN);
const ms = (x: number) => (Number.isFinite(x) ? (x < 1 ? x.toFixed(2) : x < 10 ? x.toFixed(1) : x.toFixed(0)) : "—");
const int = (x: number | undefined) => (x !== undefined && Number.isFinite(x) ? Math.round(x).toLocaleString("en-US") : "—");
const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}×` : "—");
const mb = (b: number | undefined) => (b ? `${(b / 2 ** 20).toFixed(0)}` : "—");

function present(r: RunResult): Dialect[] {
  return ORDER.filter((d) => r.meta.servers[d]);
}

export interface Target {
  what: string;
  goal: string;
  /** Torii's figure and what it is held against, as printed. */
  torii: string;
  against: string;
  /** Torii / the figure it is held against, where the goal is a ratio. */
  ratio?: number;
  met: boolean;
}

const geomean = (xs: number[]) => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);

/** The cheapest tool's round trip through `torii mcp`, end to end (the MCP ping is about 0.6 ms). */
const CHEAP_P50_MS = 1.5;
const CHEAP_P95_MS = 4;
/** Peak RSS of the last full run recorded here (daemon, `torii mcp`), for a run without a before build. */
const RSS_BEFORE_MB = { daemon: 25, "mcp-proxy": 17 } as const;

/** The targets, evaluated on this run. */
export function targets(r: RunResult): Target[] {
  const out: Target[] = [];
  const t = r.meta.servers.torii;
  if (!t) return out;
  const peers = PEERS.filter((d) => r.meta.servers[d]);
  if (!peers.length) return out;
  const best = (f: (d: Dialect) => number) => peers.map((d) => ({ d, v: f(d) })).filter((x) => Number.isFinite(x.v) && x.v > 0).sort((a, b) => a.v - b.v)[0];
  const vs = (what: string, goal: string, limit: number, torii: number, b: { d: Dialect; v: number } | undefined, fmt: (x: number) => string, extraOk = true) => {
    if (!b || !Number.isFinite(torii)) return;
    const ratio = torii / b.v;
    out.push({ what, goal, torii: fmt(torii), against: `${fmt(b.v)} (${SHORT[b.d]})`, ratio, met: ratio <= limit && extraOk });
  };

  const c = r.cheap?.torii;
  if (c?.ms.length) {
    const ping = `transport only (MCP ping): p50 ${ms(med(c.pingMs))} ms, p95 ${ms(p95(c.pingMs))} ms`;
    out.push({ what: `cheapest tool round trip (\`${c.tool}\`) p50`, goal: `≤ ${CHEAP_P50_MS} ms`, torii: `${ms(med(c.ms))} ms`, against: ping, met: med(c.ms) <= CHEAP_P50_MS });
    out.push({ what: `cheapest tool round trip (\`${c.tool}\`) p95`, goal: `≤ ${CHEAP_P95_MS} ms`, torii: `${ms(p95(c.ms))} ms`, against: ping, met: p95(c.ms) <= CHEAP_P95_MS });
  }

  for (const { title, small, res } of Object.values(r.rounds ?? {})) {
    const tr = res.torii;
    if (!tr?.navigate.ms.length) continue;
    if (small) {
      vs(`round, navigate: ${title}`, "≤ fastest peer", 1, med(tr.navigate.ms), best((d) => med(res[d]?.navigate.ms)), (x) => `${ms(x)} ms`);
      vs(`round, first snapshot after navigate: ${title}`, "≤ fastest peer", 1, med(tr.snapshot.ms), best((d) => med(res[d]?.snapshot.ms)), (x) => `${ms(x)} ms`);
    }
    vs(`round, click and observe: ${title}`, "the fastest", 1, med(tr.click.ms), best((d) => med(res[d]?.click.ms)), (x) => `${ms(x)} ms`, tr.click.observed);
  }
  const small: number[] = [];
  for (const [pid, { title, res }] of Object.entries(r.snapshot)) {
    const tc = res.torii;
    if (!tc?.ms.length) continue;
    const fast = best((d) => med(res[d]?.ms));
    vs(`snapshot latency: ${title}`, "≤ fastest peer", 1, med(tc.ms), fast, (x) => `${ms(x)} ms`);
    if (fast && SMALL_PAGES.includes(pid)) small.push(med(tc.ms) / fast.v);
  }
  if (small.length) {
    const g = geomean(small);
    out.push({ what: `snapshot latency: geometric mean over the ${small.length} realistic pages of Torii / fastest peer`, goal: "≤ 0.5×", torii: `${g.toFixed(2)}×`, against: "per page above", ratio: g, met: g <= 0.5 });
  }
  for (const { title, res } of Object.values(r.snapshot)) {
    const tc = res.torii;
    if (!tc?.chars.length) continue;
    const fid = (d: Dialect) => (res[d]?.chars.length ? res[d]!.fidelity.found / res[d]!.fidelity.total : NaN);
    const peerBest = Math.max(...peers.map(fid).filter(Number.isFinite));
    const fidOk = fid("torii") + 1e-9 >= peerBest;
    vs(`snapshot chars: ${title}`, "≤ 0.5× smaller peer, fidelity ≥ peers'", 0.5, med(tc.chars), best((d) => med(res[d]?.chars)), int, fidOk);
    if (!fidOk) out[out.length - 1]!.against += `; fidelity ${(fid("torii") * 100).toFixed(0)}% < ${(peerBest * 100).toFixed(0)}%`;
  }
  const acts: [string, { res: PerServer<Series> } | undefined][] = [
    ["navigate", r.navigate],
    ["click and observe", r.click],
    ["form task", r.form],
  ];
  for (const [name, a] of acts) {
    if (!a?.res.torii) continue;
    vs(`${name} latency`, "≤ 0.5× fastest peer", 0.5, med(a.res.torii.ms), best((d) => med(a.res[d]?.ms)), (x) => `${ms(x)} ms`);
  }
  const mem = r.memory.torii?.byCategory;
  if (mem) {
    // Against the earlier build measured in this run when there is one; else the figures of the
    // last full run this file recorded (RSS_BEFORE_MB).
    const prior = r.memory.toriibefore?.byCategory;
    for (const [cat, name] of [["daemon", "daemon"], ["mcp-proxy", "`torii mcp`"]] as const) {
      const v = (mem[cat] ?? NaN) / 2 ** 20;
      const measured = (prior?.[cat] ?? NaN) / 2 ** 20;
      const before = Number.isFinite(measured) ? measured : RSS_BEFORE_MB[cat];
      const src = Number.isFinite(measured) ? "Torii before, this run" : "the last recorded run";
      if (Number.isFinite(v)) out.push({ what: `peak RSS: ${name}`, goal: "≤ before", torii: `${v.toFixed(0)} MB`, against: `${before.toFixed(0)} MB (${src})`, ratio: v / before, met: v <= before + 0.5 });
    }
  }
  const pw = r.meta.servers.playwright;
  if (pw) out.push({ what: "tools/list chars", goal: "≤ 0.6× Playwright MCP", torii: int(t.toolsListChars), against: `${int(pw.toolsListChars)} (Playwright)`, ratio: t.toolsListChars / pw.toolsListChars, met: t.toolsListChars / pw.toolsListChars <= 0.6 });
  return out;
}

/** Torii built from the last commit against the working tree's build, from this one run. */
function beforeAfter(r: RunResult): string[] {
  const rows: string[][] = [];
  const add = (what: string, b: number, a: number, fmt: (x: number) => string) => {
    if (Number.isFinite(a) || Number.isFinite(b)) rows.push([what, fmt(b), fmt(a), ratio(a, b)]);
  };
  const msf = (x: number) => `${ms(x)} ms`;
  const cb = r.cheap?.toriibefore;
  const ca = r.cheap?.torii;
  if (cb && ca) {
    add(`cheapest tool (\`${ca.tool}\`) p50`, med(cb.ms), med(ca.ms), msf);
    add(`cheapest tool (\`${ca.tool}\`) p95`, p95(cb.ms), p95(ca.ms), msf);
    add("MCP ping p50", med(cb.pingMs), med(ca.pingMs), msf);
  }
  for (const { title, res } of Object.values(r.snapshot)) add(`snapshot latency: ${title}`, med(res.toriibefore?.ms), med(res.torii?.ms), msf);
  for (const { title, res } of Object.values(r.snapshot)) add(`snapshot chars: ${title}`, med(res.toriibefore?.chars), med(res.torii?.chars), int);
  const acts: [string, { res: PerServer<Series & Partial<TaskStats>> } | undefined][] = [["navigate", r.navigate], ["click and observe", r.click], ["form task", r.form]];
  for (const [name, a] of acts) {
    if (!a) continue;
    const calls = (d: Dialect) => a.res[d]?.calls;
    add(`${name}${calls("toriibefore") && calls("toriibefore")! > 1 ? ` (calls: ${calls("toriibefore")} → ${calls("torii")})` : ""}`, med(a.res.toriibefore?.ms), med(a.res.torii?.ms), msf);
  }
  for (const { title, res } of Object.values(r.rounds ?? {})) {
    const b = res.toriibefore;
    const a = res.torii;
    if (!a || !b) continue;
    add(`round, navigate: ${title}`, med(b.navigate.ms), med(a.navigate.ms), msf);
    add(`round, first snapshot: ${title}`, med(b.snapshot.ms), med(a.snapshot.ms), msf);
    add(`round, click and observe: ${title}`, med(b.click.ms), med(a.click.ms), msf);
  }
  const mb1 = (x: number) => `${(x / 2 ** 20).toFixed(0)} MB`;
  for (const [cat, name] of [["daemon", "peak RSS: daemon"], ["mcp-proxy", "peak RSS: `torii mcp`"], ["extension", "peak RSS: extension process"]] as const)
    add(name, r.memory.toriibefore?.byCategory[cat] ?? NaN, r.memory.torii?.byCategory[cat] ?? NaN, mb1);
  add("tools/list chars", r.meta.servers.toriibefore?.toolsListChars ?? NaN, r.meta.servers.torii?.toolsListChars ?? NaN, int);
  add("server instructions chars", r.meta.servers.toriibefore?.instructionsChars ?? NaN, r.meta.servers.torii?.instructionsChars ?? NaN, int);
  // What a client that hands the model only structuredContent reads of the same snapshot.
  for (const { title, res } of Object.values(r.snapshot)) add(`snapshot structuredContent chars: ${title}`, res.toriibefore?.structuredChars ?? NaN, res.torii?.structuredChars ?? NaN, int);
  return [
    "## Before and after, same run",
    "",
    "Torii built from an earlier commit (\"before\", its version in the table at the top) and from the working tree (\"after\"), both launched the same way and interleaved with the peers in this one run.",
    "",
    ...table(["measure", "before", "after", "after / before"], rows),
  ];
}

/** The round, step by step: each server's median (p95) and Torii against the fastest peer. */
function roundSection(r: RunResult, ds: Dialect[], peers: Dialect[]): string[] {
  const L = ["## The round: navigate → first snapshot → click and observe", ""];
  L.push(
    "What an agent does most: navigate to a fresh URL (a unique query string every round, so each round is a new document and its first snapshot pays for it), snapshot it, click a button found in that snapshot and see the result in what the click returns (as in *Actions* below: Torii `click` with `observe:\"diff\"`, Playwright `browser_click`, DevTools `click` with `includeSnapshot:true`, agent-browser `agent_browser_click` then `agent_browser_snapshot`). Torii navigates its one tab by `tabId`, as the peers navigate their one page. Each step is timed on its own; the servers take turns round by round after one untimed round. Median / p95 ms.",
    "",
  );
  const rows: string[][] = [];
  const steps: [string, (s: RoundStats) => Series | TaskStats][] = [
    ["navigate", (s) => s.navigate],
    ["first snapshot", (s) => s.snapshot],
    ["click and observe", (s) => s.click],
  ];
  for (const { title, res } of Object.values(r.rounds ?? {})) {
    for (const [step, f] of steps) {
      const row = [title, step];
      for (const d of ds) {
        const s = res[d] ? f(res[d]!) : undefined;
        row.push(!s?.ms.length ? "—" : `${ms(med(s.ms))} / ${ms(p95(s.ms))}${(s as TaskStats).observed === false ? " (result not seen)" : ""}`);
      }
      if (ds.includes("torii") && peers.length) {
        const b = peers.map((d) => ({ d, v: med(res[d] ? f(res[d]!).ms : undefined) })).filter((x) => Number.isFinite(x.v) && x.v > 0).sort((a, c) => a.v - c.v)[0];
        row.push(b ? `${ratio(med(res.torii ? f(res.torii).ms : undefined), b.v)} (${SHORT[b.d]})` : "—");
      }
      rows.push(row);
    }
  }
  L.push(...table(["page", "step", ...ds.map((d) => SHORT[d]), ...(ds.includes("torii") && peers.length ? ["Torii / fastest peer"] : [])], rows, [0, 1]));
  return L;
}

/** One markdown table; the columns in `left` hold text, the others figures. */
function table(head: string[], rows: string[][], left: number[] = [0]): string[] {
  return [`| ${head.join(" | ")} |`, `|${head.map((_, i) => (left.includes(i) ? "---" : "---:")).join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)];
}

export function markdown(r: RunResult, chartPath: string | undefined): string {
  const ds = present(r);
  const peers = PEERS.filter((d) => ds.includes(d));
  const withTorii = ds.includes("torii") && peers.length > 0;
  const L: string[] = [];
  const m = r.meta;
  const bestOf = (f: (d: Dialect) => number) => peers.map((d) => ({ d, v: f(d) })).filter((x) => Number.isFinite(x.v) && x.v > 0).sort((a, b) => a.v - b.v)[0];
  L.push(`# Benchmarks: ${TITLE}`, "");
  L.push(`Generated by \`make bench\` (\`npm --prefix bench run bench\`) on ${m.date}${m.smoke ? " — **smoke run (1 repetition): not for quoting**" : ""}.`);
  L.push(`The harness (\`bench/\`) starts the ${ds.length} servers against the same installed Chromium and the same fixture pages served on loopback, drives each through its own MCP tools with one MCP client (\`@modelcontextprotocol/sdk\`, stdio), interleaves them (A B C D A B C D …) and repeats each measurement; latencies are client-side wall clock per \`tools/call\`.`, "");
  L.push("| | |", "|---|---|");
  L.push(`| machine | ${m.machine.cpu}, ${m.machine.cores} cores, ${m.machine.memGiB} GiB, ${m.machine.os}, Linux ${m.machine.kernel} |`);
  L.push(`| load average | ${m.load.start.map((x) => x.toFixed(1)).join(" / ")} at start, ${m.load.end.map((x) => x.toFixed(1)).join(" / ")} at end (1 / 5 / 15 min) |`);
  L.push(`| browser | ${m.chromium}, headless (all ${ds.length}) |`);
  L.push(`| runtime | Node.js ${m.node}; tokenizer ${m.tokenizer} |`);
  for (const d of ds) L.push(`| ${m.servers[d]!.label} | ${m.servers[d]!.version} |`);
  L.push(m.smoke ? "| repetitions | 1, no warm-up |" : `| repetitions | ${m.reps} per measurement after one untimed warm-up${r.snapshot["rows-10000"] ? " (10,000 rows: 3, no warm-up — a peer takes over a minute per snapshot)" : ""}; the cheapest call ${m.reps * 10} |`, "");

  const tg = targets(r);
  if (tg.length) {
    L.push("## Targets", "");
    L.push(...table(["target", "goal", "Torii", "held against", "ratio", "met"], tg.map((t) => [t.what, t.goal, t.torii, t.against, t.ratio === undefined ? "" : `${t.ratio.toFixed(2)}×`, t.met ? "yes" : "**no**"]), [0, 1, 3]), "");
  }

  if (r.rounds && Object.keys(r.rounds).length) L.push(...roundSection(r, ds, peers), "");

  if (r.cheap) {
    L.push("## The cost of one call", "");
    L.push("Each server's cheapest tool that still reaches the browser, and beside it an MCP `ping` (answered by the server without any tool: the transport alone). For Torii the tool's path is MCP client → `torii mcp` (stdio relay) → daemon → extension → browser and back; the ping is answered by the MCP server itself, so it measures the hops to it and back.", "");
    L.push(...table(["server", "tool", "tool p50 ms", "tool p95 ms", "ping p50 ms", "ping p95 ms"], ds.filter((d) => r.cheap![d]).map((d) => {
      const c = r.cheap![d]!;
      return [m.servers[d]!.label, `\`${c.tool}\``, ms(med(c.ms)), ms(p95(c.ms)), ms(med(c.pingMs)), ms(p95(c.pingMs))];
    }), [0, 1]), "");
  }

  if (ds.includes("toriibefore") && ds.includes("torii")) L.push(...beforeAfter(r), "");

  L.push("## tools/list", "", "What every agent turn pays: the JSON of the `tools` array (every page of it), and beside it the server's `instructions`, which the agent's context holds too.", "");
  L.push(...table(["server", "tools", "characters", ...(ds.includes("torii") ? ["Torii / server"] : []), "instructions"], ds.map((d) => {
    const s = m.servers[d]!;
    return [s.label, String(s.tools), int(s.toolsListChars), ...(ds.includes("torii") ? [ratio(m.servers.torii!.toolsListChars, s.toolsListChars)] : []), s.instructionsChars === undefined ? "—" : int(s.instructionsChars)];
  })), "");

  L.push("## Snapshot", "");
  L.push("One full snapshot of the page just navigated to. Latency: median / p95 ms. Size: characters (tokens). Fidelity: how many of the elements an agent must address (every button, link and field, by accessible name; see `bench/src/fidelity.ts`) the snapshot exposes with a usable handle.");
  if (ds.includes("torii")) L.push(`Torii's \`snapshot\` pages its output; the harness asks for pages of ${(200_000).toLocaleString("en-US")} characters and follows the cursor, so Torii's figures are for the whole page (sum of calls, calls noted).`);
  if (ds.includes("agentbrowser")) L.push("agent-browser's snapshot is asked for the whole tree (`interactive:false`), as the other servers print it; its default lists interactive elements only and drops the page's text (an agent cannot read the article from it) — its size is in the last column, for reference, not compared.");
  L.push("");
  const snaps = Object.values(r.snapshot);
  L.push("Latency (median / p95 ms):", "");
  L.push(...table(["page", ...ds.map((d) => SHORT[d]), ...(withTorii ? ["Torii / fastest peer"] : [])], snaps.map(({ title, res }) => {
    const row = [title];
    for (const d of ds) {
      const s = res[d];
      row.push(!s ? "—" : !s.ms.length ? `failed: ${s.error ?? "?"}` : `${ms(med(s.ms))} / ${ms(p95(s.ms))}${s.failures ? ` (${s.failures} failed)` : ""}`);
    }
    if (withTorii) {
      const b = bestOf((d) => med(res[d]?.ms));
      row.push(b ? `${ratio(med(res.torii?.ms), b.v)} (${SHORT[b.d]})` : "—");
    }
    return row;
  })), "");
  L.push("Size, characters (tokens):", "");
  const abInteractive = ds.includes("agentbrowser");
  L.push(...table(["page", ...ds.map((d) => SHORT[d]), ...(withTorii ? ["Torii / smallest peer"] : []), ...(abInteractive ? ["agent-browser default (interactive only)"] : [])], snaps.map(({ title, res }) => {
    const row = [title];
    for (const d of ds) {
      const s = res[d];
      row.push(!s?.chars.length ? "—" : `${int(med(s.chars))} (${int(s.tokens)})${s.calls > 1 ? `, ${s.calls} calls` : ""}`);
    }
    if (withTorii) {
      const b = bestOf((d) => med(res[d]?.chars));
      row.push(b ? `${ratio(med(res.torii?.chars), b.v)} (${SHORT[b.d]})` : "—");
    }
    if (abInteractive) row.push(int(res.agentbrowser?.interactiveChars));
    return row;
  })), "");
  L.push("Fidelity (addressable / expected):", "");
  L.push(...table(["page", ...ds.map((d) => SHORT[d])], snaps.map(({ title, res }) => [title, ...ds.map((d) => (res[d] ? `${res[d]!.fidelity.found}/${res[d]!.fidelity.total}` : "—"))])), "");
  const misses: string[] = [];
  for (const { title, res } of snaps)
    for (const d of ds) {
      const f = res[d]?.fidelity;
      if (f && f.missing.length) misses.push(`- ${title}, ${m.servers[d]!.label}: ${f.missing.length} missing — ${f.missing.slice(0, 8).join("; ")}${f.missing.length > 8 ? "; …" : ""}`);
    }
  if (misses.length) L.push("Not addressable in the snapshot:", "", ...misses, "");

  const acts: [string, { res: PerServer<Series & Partial<TaskStats>> } | undefined][] = [
    [`navigate (${r.navigate?.page ?? ""})`, r.navigate],
    [`click and observe (${r.click?.page ?? ""})`, r.click],
    [`fill-a-form task (${r.form?.page ?? ""}, ${r.form?.fields ?? 0} fields + submit)`, r.form],
  ];
  if (acts.some(([, a]) => a)) {
    L.push("## Actions", "");
    L.push("navigate: one call to a fresh URL. Click and observe: the click plus what the server returns for the agent to see the result (Torii `click` with `observe:\"diff\"`; Playwright `browser_click`, which returns its own snapshot; DevTools `click` with `includeSnapshot:true`; agent-browser's click returns no page state, so `agent_browser_click` then `agent_browser_snapshot`); \"result not seen\" says the page's reaction was not in the reply. Form task: snapshot, fill 14 fields of every kind (text, select, radio, checkbox) with the server's most economical tools (Playwright `browser_fill_form`, DevTools `fill_form` and Torii `fill_form` take all fields in one call; agent-browser's default tool profile has none — its `agent_browser_batch` is in the opt-in `debug` profile — so one call per field), submit, and see the confirmation; latency and characters are summed over the task.", "");
    L.push("Latency (median / p95 ms), characters returned (calls):", "");
    L.push(...table(["action", ...ds.map((d) => SHORT[d]), ...(withTorii ? ["Torii / fastest peer", "Torii / fewest chars"] : [])], acts.filter(([, a]) => a).map(([name, a]) => {
      const row = [name];
      for (const d of ds) {
        const s = a!.res[d];
        if (!s?.ms.length) {
          row.push("—");
          continue;
        }
        const extra = [s.calls && s.calls > 1 ? `${s.calls} calls` : "", s.observed === false ? "result not seen" : ""].filter(Boolean).join(", ");
        row.push(`${ms(med(s.ms))} / ${ms(p95(s.ms))} · ${int(med(s.chars))}${extra ? ` (${extra})` : ""}`);
      }
      if (withTorii) {
        const b = bestOf((d) => med(a!.res[d]?.ms));
        const c = bestOf((d) => med(a!.res[d]?.chars));
        row.push(b ? `${ratio(med(a!.res.torii?.ms), b.v)} (${SHORT[b.d]})` : "—", c ? `${ratio(med(a!.res.torii?.chars), c.v)} (${SHORT[c.d]})` : "—");
      }
      return row;
    })), "");
  }

  L.push("## Memory", "");
  L.push("Peak resident memory over the whole run, sampled from `/proc` every 0.5 s, summed over each server's process tree. For Playwright MCP and Chrome DevTools MCP: their Node.js server process plus the Chromium it launched. For agent-browser: its `agent-browser mcp` process, its session daemon (a detached process of the same binary) and the Chromium the daemon launched. For Torii: the daemon (`torii serve`), the agent's `torii mcp` stdio process, and the managed Chromium, with the extension's own process (the service worker's `--extension-process` renderer) broken out. RSS counts pages shared between a browser's processes once per process; PSS splits them, so it is the fairer total. *Server-side overhead* compares like with like: the peers' own processes against Torii's daemon + `torii mcp` + the extension process.", "");
  L.push("| server | tree RSS (MB) | tree PSS (MB) | browser RSS (MB) | server-side overhead RSS (MB) | of which | processes |", "|---|---:|---:|---:|---:|---|---:|");
  for (const d of ds) {
    const p = r.memory[d];
    if (!p) continue;
    const c = p.byCategory;
    const browser = Object.entries(c).filter(([k]) => k.startsWith("browser")).reduce((a, [, v]) => a + v, 0);
    const over = overhead(p, d);
    const of = d === "torii" || d === "toriibefore" ? `daemon ${mb(c.daemon)}, torii mcp ${mb(c["mcp-proxy"])}, extension ${mb(c.extension)}` : d === "agentbrowser" ? `agent-browser mcp ${mb(c.mcp)}, daemon ${mb(c.daemon)}` : `Node.js ${mb(c.server)}`;
    L.push(`| ${m.servers[d]!.label} | ${mb(p.rss)} | ${mb(p.pss)} | ${mb(browser)} | ${mb(over)} | ${of} | ${p.processes} |`);
  }
  L.push("");
  if (chartPath) L.push("## Chart", "", `![${TITLE}](${chartPath})`, "");
  if (m.notes.length) L.push(...m.notes, "");
  return L.join("\n");
}

// ---------- chart ----------

interface Panel {
  title: string;
  unit: string;
  log: boolean;
  groups: { label: string; values: PerServer<number> }[];
}

function panels(r: RunResult): Panel[] {
  const snaps = Object.values(r.snapshot);
  const out: Panel[] = [
    { title: "Snapshot size (characters, log scale)", unit: "chars", log: true, groups: snaps.map(({ title, res }) => ({ label: title, values: Object.fromEntries(ORDER.map((d) => [d, med(res[d]?.chars)])) })) },
    { title: "Snapshot latency (median ms, log scale)", unit: "ms", log: true, groups: snaps.map(({ title, res }) => ({ label: title, values: Object.fromEntries(ORDER.map((d) => [d, med(res[d]?.ms)])) })) },
  ];
  const acts: Panel["groups"] = [];
  if (r.navigate) acts.push({ label: "navigate", values: Object.fromEntries(ORDER.map((d) => [d, med(r.navigate!.res[d]?.ms)])) });
  if (r.click) acts.push({ label: "click + observe", values: Object.fromEntries(ORDER.map((d) => [d, med(r.click!.res[d]?.ms)])) });
  const rounds = Object.entries(r.rounds ?? {});
  if (rounds.length) {
    // Medians over the small pages' rounds: what an agent pays on the pages it sees most.
    const small = rounds.filter(([, x]) => x.small);
    const over = (f: (s: RoundStats) => number[]) => Object.fromEntries(ORDER.map((d) => [d, med(small.flatMap(([, x]) => (x.res[d] ? f(x.res[d]!) : [])))]));
    acts.push({ label: "navigate (small pages)", values: over((s) => s.navigate.ms) });
    acts.push({ label: "first snapshot (small)", values: over((s) => s.snapshot.ms) });
    acts.push({ label: "click + observe (small)", values: over((s) => s.click.ms) });
  }
  if (r.form) acts.push({ label: "form task", values: Object.fromEntries(ORDER.map((d) => [d, med(r.form!.res[d]?.ms)])) });
  if (r.cheap) {
    acts.push({ label: "cheapest tool", values: Object.fromEntries(ORDER.map((d) => [d, med(r.cheap![d]?.ms)])) });
    acts.push({ label: "MCP ping", values: Object.fromEntries(ORDER.map((d) => [d, med(r.cheap![d]?.pingMs)])) });
  }
  if (acts.length) out.push({ title: "Actions (median ms, log scale)", unit: "ms", log: true, groups: acts });
  out.push({
    title: "tools/list (characters, linear)",
    unit: "chars",
    log: false,
    groups: [{ label: "tools/list", values: Object.fromEntries(ORDER.map((d) => [d, r.meta.servers[d]?.toolsListChars ?? NaN])) }],
  });
  out.push({
    title: "Peak memory (MB, linear): whole tree PSS, and server-side overhead RSS",
    unit: "MB",
    log: false,
    groups: [
      { label: "tree PSS (server + browser)", values: Object.fromEntries(ORDER.map((d) => [d, (r.memory[d]?.pss ?? NaN) / 2 ** 20])) },
      { label: "server-side overhead RSS", values: Object.fromEntries(ORDER.map((d) => [d, overhead(r.memory[d], d) / 2 ** 20])) },
    ],
  });
  return out;
}

/** Peers: their own processes (Node.js; agent-browser's mcp + daemon). Torii: daemon + `torii mcp` + the extension's process. */
function overhead(p: MemPeak | undefined, d: Dialect): number {
  if (!p) return NaN;
  const c = p.byCategory;
  if (d === "torii" || d === "toriibefore") return (c.daemon ?? 0) + (c["mcp-proxy"] ?? 0) + (c.extension ?? 0);
  return d === "agentbrowser" ? (c.mcp ?? 0) + (c.daemon ?? 0) : (c.server ?? NaN);
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
const short = (v: number) => (v >= 1e6 ? `${(v / 1e6).toFixed(1)}M` : v >= 1e4 ? `${(v / 1e3).toFixed(0)}k` : v >= 1e3 ? `${(v / 1e3).toFixed(1)}k` : v >= 10 ? v.toFixed(0) : v.toFixed(1));

export function svg(r: RunResult): string {
  const ds = present(r);
  const ps = panels(r);
  const W = 1200;
  const PH = 300;
  const top = 70;
  const H = top + ps.length * (PH + 30);
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="DejaVu Sans, Arial, sans-serif">`);
  parts.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  parts.push(`<text x="20" y="30" font-size="20" font-weight="bold">${esc(TITLE)} — ${esc(r.meta.date.slice(0, 10))}${r.meta.smoke ? " (smoke)" : ""}</text>`);
  ds.forEach((d, i) => {
    parts.push(`<rect x="${20 + i * 220}" y="42" width="14" height="14" fill="${COLORS[d]}"/><text x="${40 + i * 220}" y="54" font-size="14">${esc(r.meta.servers[d]!.label)}</text>`);
  });
  ps.forEach((p, pi) => {
    const y0 = top + pi * (PH + 30);
    const x0 = 80;
    const w = W - x0 - 20;
    const h = PH - 70;
    const yb = y0 + 30 + h;
    parts.push(`<text x="20" y="${y0 + 18}" font-size="15" font-weight="bold">${esc(p.title)}</text>`);
    const vals = p.groups.flatMap((g) => ds.map((d) => g.values[d] ?? NaN)).filter((v) => Number.isFinite(v) && v > 0);
    if (!vals.length) return;
    // Floor at least a factor 2 below the smallest bar, so no bar is a sliver on a log axis.
    const lo = p.log ? Math.pow(10, Math.floor(Math.log10(Math.min(...vals) / 2))) : 0;
    const hi = p.log ? Math.pow(10, Math.ceil(Math.log10(Math.max(...vals)))) : Math.max(...vals) * 1.1;
    const scale = (v: number) => (p.log ? (Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) : v / hi) * h;
    if (p.log) {
      for (let e = Math.log10(lo); e <= Math.log10(hi) + 1e-9; e++) {
        const y = yb - scale(Math.pow(10, e));
        parts.push(`<line x1="${x0}" x2="${x0 + w}" y1="${y}" y2="${y}" stroke="#ddd"/><text x="${x0 - 6}" y="${y + 4}" font-size="11" text-anchor="end">${short(Math.pow(10, e))}</text>`);
      }
    }
    parts.push(`<line x1="${x0}" x2="${x0 + w}" y1="${yb}" y2="${yb}" stroke="#333"/>`);
    const gw = w / p.groups.length;
    const bw = Math.min(40, (gw - 20) / ds.length);
    p.groups.forEach((g, gi) => {
      const gx = x0 + gi * gw + (gw - bw * ds.length) / 2;
      ds.forEach((d, di) => {
        const v = g.values[d] ?? NaN;
        if (!Number.isFinite(v) || v <= 0) return;
        const bh = Math.max(1, scale(v));
        const x = gx + di * bw;
        parts.push(`<rect x="${x}" y="${yb - bh}" width="${bw - 3}" height="${bh}" fill="${COLORS[d]}"/>`);
        parts.push(`<text x="${x + (bw - 3) / 2}" y="${yb - bh - 4}" font-size="10" text-anchor="middle">${short(v)}</text>`);
      });
      // Long labels wrap at ": " or " + " so neighbours do not overlap.
      const lines = g.label.length > 18 ? g.label.split(/(?<=:) | (?=\+ )/) : [g.label];
      lines.forEach((ln, li) => parts.push(`<text x="${x0 + gi * gw + gw / 2}" y="${yb + 18 + li * 14}" font-size="12" text-anchor="middle">${esc(ln)}</text>`));
    });
  });
  parts.push("</svg>");
  return parts.join("\n");
}

/** Rasterises the SVG with the installed Chromium. */
export async function png(svgText: string, path: string): Promise<void> {
  const browser = await chromium.launch({ executablePath: browserPath(), headless: true, args: [...COMMON_CHROME_ARGS, ...(isRoot ? ["--no-sandbox"] : [])] });
  try {
    const page = await browser.newPage({ deviceScaleFactor: 1 });
    await page.setContent(`<!doctype html><html><body style="margin:0">${svgText}</body></html>`);
    await page.locator("svg").first().screenshot({ path });
  } finally {
    await browser.close();
  }
}

/** The hand-written closing note (why a target is missed), appended to the generated report. */
export function closingNotes(path: string): string[] {
  return existsSync(path) ? [readFileSync(path, "utf8").trim()] : [];
}

/** A section of BENCHMARKS.md another harness writes (`make bench-abuse`): kept as it is. */
const KEPT_SECTION = /^## The daemon under abuse\b/m;

export async function writeReport(path: string, text: string): Promise<void> {
  let out = text.endsWith("\n") ? text : text + "\n";
  const old = existsSync(path) ? readFileSync(path, "utf8") : "";
  const kept = KEPT_SECTION.exec(old);
  if (kept) out += "\n" + old.slice(kept.index);
  await writeFile(path, out);
}

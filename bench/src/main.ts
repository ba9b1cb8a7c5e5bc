// `npm --prefix bench run bench` (or `make bench`): the full side-by-side run, written to
// BENCHMARKS.md and bench/results/. `--smoke` (`make bench-smoke`): one repetition on the smallest
// page, every server, failing loudly when any server cannot be driven; writes only
// bench/results/smoke.*.
//
// Flags: --reps N (default 15), --servers torii,playwright,devtools,agentbrowser, --pages rows-100,article,…
// (a subset), --before BIN (or TORII_BEFORE_BIN: a torii built from the last commit, measured in the
// same run beside the working tree's build for a before/after), --out FILE (markdown; a partial run should not overwrite BENCHMARKS.md),
// --report-only results/latest.json (re-render the report from a saved run).
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg, release, totalmem } from "node:os";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { benchDir, browserPath, repoRoot } from "./env.ts";
import type { Dialect } from "./fidelity.ts";
import { Fixtures, REALISTIC_PAGES, SMALL_PAGES, TABLE_PAGES, type Page } from "./fixtures.ts";
import { MemSampler, TOKENIZER, type MemGroup } from "./metrics.ts";
import { closingNotes, markdown, png, svg, targets, writeReport, type RunResult } from "./report.ts";
import { AgentBrowserMcp } from "./agent-browser.ts";
import { FORM_FIELDS, cheapCall, fillForm, round, snapshotPage, type RoundPage } from "./scenarios.ts";
import { DevtoolsMcp, PEER_PACKAGE, PlaywrightMcp, ToriiMcp, packageVersion, type BenchServer } from "./servers.ts";

const ALL_SERVERS = "torii,playwright,devtools,agentbrowser";

/** The round's pages: the small ones agents see most, then the 100-row table (a row's Edit button, a fresh row each round). */
const ROUNDS: RoundPage[] = [
  { page: SMALL_PAGES[0]!, button: "Sign in", expect: () => "Signed in as guest" },
  { page: SMALL_PAGES[1]!, button: "Send message", expect: () => "Message sent" },
  { page: SMALL_PAGES[2]!, button: "Add to cart", expect: () => "Added to cart" },
  { page: TABLE_PAGES[0]!, button: "Edit", expect: (k) => `editing row ${k}`, pick: (rep, n) => (Math.max(rep, 0) * 13 + 5) % Math.max(1, n) },
];

function makeServers(ids: Dialect[]): BenchServer[] {
  const all: Record<Dialect, () => BenchServer> = {
    torii: () => new ToriiMcp(),
    toriibefore: () => {
      if (!beforeBin) throw new Error("toriibefore needs --before BIN (or TORII_BEFORE_BIN)");
      return new ToriiMcp(beforeBin, true);
    },
    playwright: () => new PlaywrightMcp(),
    devtools: () => new DevtoolsMcp(),
    agentbrowser: () => new AgentBrowserMcp(),
  };
  return ids.map((id) => {
    const make = all[id];
    if (!make) throw new Error(`unknown server "${id}" (known: ${ALL_SERVERS})`);
    return make();
  });
}

/** Which source tree the Torii binary was built from: the commit, and whether the tree had edits. */
function treeState(): string {
  try {
    const head = execFileSync("git", ["-C", repoRoot, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
    const lines = execFileSync("git", ["-C", repoRoot, "status", "--porcelain"], { encoding: "utf8" }).split("\n").filter(Boolean);
    const added = lines.filter((l) => l.startsWith("??")).length;
    const changed = lines.length - added;
    return lines.length ? `${head} + uncommitted changes (${changed} files changed, ${added} new)` : head;
  } catch {
    return "?";
  }
}

const { values: flags } = parseArgs({
  options: {
    smoke: { type: "boolean", default: false },
    reps: { type: "string" },
    servers: { type: "string", default: ALL_SERVERS },
    out: { type: "string" },
    pages: { type: "string" },
    "report-only": { type: "string" },
    before: { type: "string" },
  },
});

const smoke = flags.smoke === true;
const reps = smoke ? 1 : Number(flags.reps ?? process.env.BENCH_REPS ?? 15);
const ids = String(flags.servers).split(",").map((s) => s.trim()).filter(Boolean) as Dialect[];
const beforeBin = flags.before ?? process.env.TORII_BEFORE_BIN;
if (beforeBin && ids.includes("torii") && !ids.includes("toriibefore")) ids.splice(ids.indexOf("torii") + 1, 0, "toriibefore");
const resultsDir = join(benchDir, "results");
const log = (s: string) => process.stdout.write(s + "\n");

function osName(): string {
  try {
    return /^PRETTY_NAME="?([^"\n]+)"?/m.exec(readFileSync("/etc/os-release", "utf8"))?.[1] ?? "Linux";
  } catch {
    return "Linux";
  }
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const chromiumVersion = execFileSync(browserPath(), ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  const fx = new Fixtures();
  await fx.start();
  const servers: BenchServer[] = [];
  let sampler: MemSampler | undefined;
  const cleanup = async () => {
    sampler?.stop();
    await Promise.allSettled(servers.map((s) => s.stop()));
    await fx.stop();
  };
  process.once("SIGINT", () => void cleanup().then(() => process.exit(130)));
  try {
    for (const s of makeServers(ids)) {
      log(`starting ${s.label} …`);
      const ts = Date.now();
      servers.push(s);
      await s.start();
      log(`  ${s.label} ${s.version}: ${s.toolCount} tools, tools/list ${s.toolsListChars} chars (${Date.now() - ts} ms to start)`);
    }
    // Every server starts on a page of the fixture origin (Torii's first navigate opens its tab).
    for (const s of servers) await s.navigate(fx.url("/table.html?rows=1"));
    sampler = new MemSampler(new Map<string, MemGroup>(servers.map((s) => [s.id, s.mem()])));
    sampler.start();

    const result: RunResult = {
      meta: {
        date: new Date().toISOString(),
        smoke,
        reps,
        machine: { cpu: cpus()[0]?.model.trim() ?? "?", cores: cpus().length, memGiB: Math.round(totalmem() / 2 ** 30), os: osName(), kernel: release() },
        load: { start: loadavg(), end: [] },
        node: process.versions.node,
        chromium: chromiumVersion,
        tokenizer: TOKENIZER,
        servers: Object.fromEntries(servers.map((s) => [s.id, { label: s.label, version: s.id === "toriibefore" ? `${s.version}: an earlier build (that commit, without the working tree's changes), launched the same way` : s.id === "torii" ? `${s.version}, tree ${treeState()}${(s as { permissive?: boolean }).permissive ? " (`torii launch --permissive`: every origin allowed, approvals pre-granted; the policy gate still runs on every call)" : ""}` : `${s.version} (npm ${packageVersion(PEER_PACKAGE[s.id as keyof typeof PEER_PACKAGE])})`, tools: s.toolCount, toolsListChars: s.toolsListChars, instructionsChars: s.instructionsChars }])),
        notes: [],
      },
      snapshot: {},
      memory: {},
    };

    let pages: Page[] = smoke ? [TABLE_PAGES[0]!] : [...TABLE_PAGES, ...REALISTIC_PAGES];
    if (flags.pages) pages = [...TABLE_PAGES, ...REALISTIC_PAGES].filter((p) => flags.pages!.split(",").includes(p.id));
    // The last snapshot of each page per server, for auditing the fidelity check.
    const dumpDir = join(resultsDir, "snapshots");
    await mkdir(dumpDir, { recursive: true });
    log(`snapshots (${reps} repetitions, interleaved ${servers.map((s) => s.label).join(" → ")}):`);
    for (const p of pages) {
      const n = smoke ? 1 : (p.reps ?? reps);
      result.snapshot[p.id] = { title: p.title, res: await snapshotPage(servers, fx, p, n, { warmup: !smoke && p.reps === undefined, tolerate: !smoke, dumpDir }, log) };
    }
    const checkout = REALISTIC_PAGES.find((p) => p.id === "checkout")!;
    const rounds = smoke ? ROUNDS.slice(0, 1) : flags.pages ? ROUNDS.filter((x) => flags.pages!.split(",").includes(x.page.id)) : ROUNDS;
    log(`rounds: navigate → first snapshot → click and observe (${reps} repetitions):`);
    result.rounds = {};
    for (const rp of rounds) result.rounds[rp.page.id] = { title: rp.page.title, small: SMALL_PAGES.includes(rp.page), res: await round(servers, fx, rp, reps, log) };
    log("actions:");
    result.cheap = await cheapCall(servers, smoke ? 1 : reps * 10, log);
    if (!smoke) result.form = { page: checkout.title, fields: FORM_FIELDS, res: await fillForm(servers, fx, checkout, reps, log) };

    sampler.stop();
    result.meta.load.end = loadavg();
    for (const s of servers) {
      const p = sampler.peaks.get(s.id);
      if (p) result.memory[s.id] = p;
    }

    await mkdir(resultsDir, { recursive: true });
    const partial = !smoke && (flags.out !== undefined || flags.pages !== undefined || flags.servers !== ALL_SERVERS);
    const stem = smoke ? "smoke" : partial ? "partial" : "latest";
    await writeFile(join(resultsDir, `${stem}.json`), JSON.stringify(result, null, 1));
    const chart = join(resultsDir, `${stem}.png`);
    await png(svg(result), chart);
    const mdPath = flags.out ?? (smoke ? join(resultsDir, "smoke.md") : partial ? join(resultsDir, "partial.md") : join(repoRoot, "BENCHMARKS.md"));
    if (!smoke) result.meta.notes = closingNotes(join(benchDir, "notes.md"));
    const rel = relative(join(mdPath, ".."), chart);
    await writeReport(mdPath, markdown(result, rel));
    log(`\nwrote ${relative(process.cwd(), mdPath)} and ${relative(process.cwd(), chart)} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    for (const t of targets(result)) log(`  target ${t.what}: ${t.torii}${t.ratio === undefined ? "" : ` = ${t.ratio.toFixed(2)}×`} against ${t.against} (goal ${t.goal}) ${t.met ? "met" : "MISSED"}`);
  } finally {
    await cleanup();
  }
}

/** Re-renders BENCHMARKS.md and the chart from a saved run (e.g. after editing notes.md). */
async function reportOnly(jsonPath: string): Promise<void> {
  const result = JSON.parse(readFileSync(jsonPath, "utf8")) as RunResult;
  result.meta.notes = result.meta.smoke ? [] : closingNotes(join(benchDir, "notes.md"));
  const chart = jsonPath.replace(/\.json$/, ".png");
  await png(svg(result), chart);
  const mdPath = flags.out ?? (result.meta.smoke ? jsonPath.replace(/\.json$/, ".md") : join(repoRoot, "BENCHMARKS.md"));
  await writeReport(mdPath, markdown(result, relative(join(mdPath, ".."), chart)));
  log(`wrote ${relative(process.cwd(), mdPath)} and ${relative(process.cwd(), chart)}`);
}

(flags["report-only"] ? reportOnly(flags["report-only"]) : main()).then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`\nBENCH FAILED: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);

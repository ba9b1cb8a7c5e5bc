// The measurements. Every one interleaves the servers (A B C A B C …) so that drift — a warming
// JIT, a busy core, a growing heap — hits all of them alike, and repeats enough for medians and p95.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Fixtures, type Page } from "./fixtures.ts";
import { coverage, expectedFor, findAll, parseSnapshot, type Coverage, type Dialect } from "./fidelity.ts";
import { tokens } from "./metrics.ts";
import { ToolError, type BenchServer, type CallResult, type FormField } from "./servers.ts";

export interface Series {
  ms: number[];
  chars: number[];
}

export interface SnapshotStats extends Series {
  tokens: number;
  calls: number;
  fidelity: Coverage;
  /** Repetitions that failed (e.g. the server's own time limit), with the first error. */
  failures: number;
  error?: string;
  /** agent-browser: characters of its default snapshot (interactive elements only, no page text). */
  interactiveChars?: number;
  /** Characters of the last snapshot's structuredContent (JSON; 0 without it). */
  structuredChars?: number;
}

export interface TaskStats extends Series {
  calls: number;
  /** The result the agent must see appeared in what the server returned. */
  observed: boolean;
}

export type PerServer<T> = Partial<Record<Dialect, T>>;

export interface Log {
  (msg: string): void;
}

const series = (): Series => ({ ms: [], chars: [] });

async function interleave(servers: BenchServer[], reps: number, fn: (s: BenchServer, rep: number) => Promise<void>): Promise<void> {
  for (let rep = 0; rep < reps; rep++) for (const s of servers) await fn(s, rep);
}

/**
 * Snapshot latency, size (chars, tokens) and fidelity of one page. With `tolerate`, a server that
 * fails on this page (its own time limit on a huge page, say) is recorded as failing and skipped
 * after two failures, instead of ending the run; the smoke run tolerates nothing.
 */
export async function snapshotPage(servers: BenchServer[], fx: Fixtures, page: Page, reps: number, opts: { warmup: boolean; tolerate: boolean; dumpDir?: string }, log: Log): Promise<PerServer<SnapshotStats>> {
  const url = fx.url(page);
  const out: PerServer<SnapshotStats & { last: string }> = {};
  const structured: PerServer<number> = {};
  for (const s of servers) out[s.id] = { ...series(), tokens: 0, calls: 1, fidelity: { found: 0, total: 0, missing: [] }, failures: 0, last: "" };
  const once = async (s: BenchServer, timed: boolean) => {
    const o = out[s.id]!;
    if (o.failures >= 2) return;
    try {
      await s.navigate(url);
      const r = (await s.snapshot()) as CallResult & { calls?: number };
      if (!timed) return;
      o.ms.push(r.ms);
      o.chars.push(r.chars);
      o.calls = r.calls ?? 1;
      o.last = r.text;
      structured[s.id] = r.structuredChars;
    } catch (e) {
      if (!opts.tolerate || !(e instanceof ToolError)) throw e;
      o.failures++;
      o.error ??= e.message.split("\n").slice(0, 3).join(" ").slice(0, 300);
      log(`  ${page.id.padEnd(11)} ${s.label.padEnd(20)} FAILED: ${o.error}`);
      await s.recover();
    }
  };
  if (opts.warmup) await interleave(servers, 1, (s) => once(s, false));
  await interleave(servers, reps, (s) => once(s, true));
  for (const s of servers) {
    const o = out[s.id]!;
    if (o.last) o.interactiveChars = await s.interactiveChars().catch(() => undefined);
  }
  const res: PerServer<SnapshotStats> = {};
  for (const s of servers) {
    const { last, ...o } = out[s.id]!;
    const expected = expectedFor(page.id);
    if (!last) {
      o.fidelity = { found: 0, total: expected.reduce((a, e) => a + (e.count ?? 1), 0), missing: ["(no snapshot: the server failed on this page)"] };
      res[s.id] = o;
      continue;
    }
    if (opts.dumpDir) writeFileSync(join(opts.dumpDir, `${page.id}.${s.id}.txt`), last);
    o.tokens = tokens(last);
    o.structuredChars = structured[s.id] ?? 0;
    o.fidelity = coverage(s.id, last, expected);
    if (!parseSnapshot(s.id, last).length) throw new Error(`${s.label}: the snapshot of ${page.title} has no addressable element:\n${last.slice(0, 1000)}`);
    res[s.id] = o;
    log(`  ${page.id.padEnd(11)} ${s.label.padEnd(20)} ${fmtMs(o.ms)}  ${o.chars.at(-1)} chars  ${o.tokens} tokens  fidelity ${o.fidelity.found}/${o.fidelity.total}${o.calls > 1 ? `  (${o.calls} calls)` : ""}${o.failures ? `  ${o.failures} failed` : ""}`);
  }
  return res;
}

/**
 * The fixed cost of one call: each server's cheapest tool that reaches the browser (Torii `tabs`,
 * Playwright `browser_tabs`, DevTools `list_pages`, agent-browser `agent_browser_get_url`), and beside
 * it an MCP `ping`, which no tool handles: the transport alone. Interleaved per call, after a warm-up.
 */
export async function cheapCall(servers: BenchServer[], reps: number, log: Log): Promise<PerServer<{ tool: string; ms: number[]; pingMs: number[] }>> {
  const out: PerServer<{ tool: string; ms: number[]; pingMs: number[] }> = {};
  for (const s of servers) out[s.id] = { tool: s.cheapTool.name, ms: [], pingMs: [] };
  const one = async (s: BenchServer, timed: boolean) => {
    const r = await s.call(s.cheapTool.name, s.cheapTool.args());
    const p = await s.ping();
    if (!timed) return;
    out[s.id]!.ms.push(r.ms);
    out[s.id]!.pingMs.push(p);
  };
  await interleave(servers, 5, (s) => one(s, false));
  await interleave(servers, reps, (s) => one(s, true));
  for (const s of servers) {
    const o = out[s.id]!;
    log(`  cheapest    ${s.label.padEnd(20)} ${o.tool} ${fmtMs(o.ms)}  ping ${fmtMs(o.pingMs)}`);
  }
  return out;
}

/** One round's steps, each timed on its own. */
export interface RoundStats {
  navigate: Series;
  snapshot: Series;
  click: TaskStats;
}

/** A page of the round: what to click (found in the snapshot by role and name) and what it shows. */
export interface RoundPage {
  page: Page;
  button: string;
  /** Text the page shows after the click (rep: the round's number, for the table's row). */
  expect: (k: number) => string;
  /** Which of the matching buttons to click in round `rep`, given how many there are. */
  pick?: (rep: number, n: number) => number;
}

/**
 * The round an agent runs most: navigate to a fresh URL (a new document every round: a unique
 * query string, so no server answers from "already there" and every first snapshot pays for a
 * new document), snapshot it, click a button found in that snapshot and see the result in what the
 * click returns. Each step timed on its own, the servers interleaved round by round, one untimed
 * warm-up round first.
 */
export async function round(servers: BenchServer[], fx: Fixtures, rp: RoundPage, reps: number, log: Log): Promise<PerServer<RoundStats>> {
  const out: PerServer<RoundStats> = {};
  for (const s of servers) out[s.id] = { navigate: series(), snapshot: series(), click: { ...series(), calls: 1, observed: true } };
  const stamp = Date.now().toString(36);
  const one = async (s: BenchServer, rep: number, timed: boolean) => {
    const nav = await s.navigate(fx.url(rp.page, `round=${stamp}-${rep}`));
    const snap = (await s.snapshot()) as CallResult & { calls?: number };
    const found = findAll(parseSnapshot(s.id, snap.text), "button", rp.button);
    const k = rp.pick ? rp.pick(rep, found.length) : 0;
    const el = found[k];
    if (!el) throw new Error(`${s.label}: no "${rp.button}" button in its first snapshot of ${rp.page.title}:\n${snap.text.slice(0, 1500)}`);
    const click = await s.clickObserve(el);
    if (!timed) return;
    const o = out[s.id]!;
    o.navigate.ms.push(nav.ms);
    o.navigate.chars.push(nav.chars);
    o.snapshot.ms.push(snap.ms);
    o.snapshot.chars.push(snap.chars);
    o.click.ms.push(click.ms);
    o.click.chars.push(click.chars);
    if (!click.text.includes(rp.expect(k))) o.click.observed = false;
  };
  await interleave(servers, 1, (s) => one(s, -1, false));
  await interleave(servers, reps, (s, rep) => one(s, rep, true));
  for (const s of servers) {
    const o = out[s.id]!;
    log(`  round ${rp.page.id.padEnd(9)} ${s.label.padEnd(20)} navigate ${fmtMs(o.navigate.ms)}  snapshot ${fmtMs(o.snapshot.ms)}  click+observe ${fmtMs(o.click.ms)}  result seen: ${o.click.observed}`);
  }
  return out;
}

/** The checkout task: snapshot, fill 14 fields of every kind, submit, see the confirmation. */
const FORM: { kind: "field"; name: string; type: FormField["type"]; value: string }[] = [
  { kind: "field", name: "Email address", type: "text", value: "ada@example.com" },
  { kind: "field", name: "Phone", type: "text", value: "+33 6 12 34 56 78" },
  { kind: "field", name: "First name", type: "text", value: "Ada" },
  { kind: "field", name: "Last name", type: "text", value: "Lovelace" },
  { kind: "field", name: "Address", type: "text", value: "12 Rue de la Paix" },
  { kind: "field", name: "City", type: "text", value: "Paris" },
  { kind: "field", name: "Postal code", type: "text", value: "75002" },
  { kind: "field", name: "Country", type: "select", value: "France" },
  { kind: "field", name: "Express (1–2 days) — €9.90", type: "radio", value: "express" },
  { kind: "field", name: "Card number", type: "text", value: "4242 4242 4242 4242" },
  { kind: "field", name: "Expiry (MM/YY)", type: "text", value: "12/29" },
  { kind: "field", name: "Security code", type: "text", value: "123" },
  { kind: "field", name: "Name on card", type: "text", value: "Ada Lovelace" },
  { kind: "field", name: "I agree to the terms and conditions", type: "checkbox", value: "true" },
];
export const FORM_FIELDS = FORM.length;
const FORM_DONE = "Order placed for Ada Lovelace, Paris (FR, express)";

export async function fillForm(servers: BenchServer[], fx: Fixtures, page: Page, reps: number, log: Log): Promise<PerServer<TaskStats>> {
  const out: PerServer<TaskStats> = {};
  for (const s of servers) out[s.id] = { ...series(), calls: 0, observed: true };
  await interleave(servers, reps, async (s, rep) => {
    await s.navigate(fx.url(page, `f=${rep}`));
    const snap = await s.snapshot();
    const items = parseSnapshot(s.id, snap.text);
    const fields: FormField[] = FORM.map((f) => {
      const el = findAll(items, "field", f.name)[0];
      if (!el) throw new Error(`${s.label}: field "${f.name}" not addressable in its snapshot of ${page.title}`);
      return { el, type: f.type, value: f.value };
    });
    const submit = findAll(items, "button", "Place order")[0];
    if (!submit) throw new Error(`${s.label}: no "Place order" button in its snapshot`);
    const rs = await s.fillForm(fields, submit);
    const o = out[s.id]!;
    o.ms.push(snap.ms + rs.reduce((a, r) => a + r.ms, 0));
    o.chars.push(snap.chars + rs.reduce((a, r) => a + r.chars, 0));
    o.calls = ((snap as { calls?: number }).calls ?? 1) + rs.length;
    if (!rs.some((r) => r.text.includes(FORM_DONE))) {
      // Not in what came back: check the page itself so a broken fill is told from a quiet server.
      const check = await s.snapshot();
      if (!check.text.includes(FORM_DONE)) throw new Error(`${s.label}: the form task did not complete; the page does not show "${FORM_DONE}":\n${check.text.slice(-1500)}`);
      o.observed = false;
    }
  });
  for (const s of servers) {
    const o = out[s.id]!;
    log(`  form task   ${s.label.padEnd(20)} ${fmtMs(o.ms)}  ${o.chars.at(-1)} chars in ${o.calls} calls  result seen: ${o.observed}`);
  }
  return out;
}

function fmtMs(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${(s[s.length >> 1] ?? NaN).toFixed(1).padStart(7)} ms`;
}

// Numbers: robust summaries of repeated timings, token counts with a standard tokenizer, and peak
// memory of each server's process tree sampled from /proc.
import { readdirSync, readFileSync } from "node:fs";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

export const TOKENIZER = "o200k_base (gpt-tokenizer)";

export function tokens(text: string): number {
  // The BPE merges on one huge line are slow; counting line by line gives the same total to
  // within a token per line break and keeps a 2 MB snapshot to a few seconds.
  let n = 0;
  for (const chunk of text.match(/[^\n]*\n?/g) ?? []) if (chunk) n += countTokens(chunk);
  return n;
}

export interface Summary {
  n: number;
  median: number;
  p95: number;
  min: number;
  max: number;
}

/** Median (mean of the middle two) and p95 by nearest rank: honest for small n (p95 of 10 is the max). */
export function summarize(xs: number[]): Summary {
  if (!xs.length) return { n: 0, median: NaN, p95: NaN, min: NaN, max: NaN };
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
  const p95 = s[Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1)] as number;
  return { n: s.length, median, p95, min: s[0] as number, max: s[s.length - 1] as number };
}

/** ms with microsecond resolution since an origin. */
export const now = () => performance.now();

// ---------- memory ----------

const PAGE = 4096;

interface ProcInfo {
  ppid: number;
  rss: number;
}

function readProcs(): Map<number, ProcInfo> {
  const out = new Map<number, ProcInfo>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      // comm may hold spaces and parentheses: fields start after the last ")".
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ppid = Number(f[1]);
      const rss = Number(f[21]) * PAGE;
      out.set(Number(d), { ppid, rss });
    } catch {
      // the process ended between readdir and read
    }
  }
  return out;
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return "";
  }
}

function pss(pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** One server's processes: root pids (their whole trees count) and how to label each process. */
export interface MemGroup {
  roots: () => number[];
  /** Category of one process, from its command line (e.g. "server", "browser", "extension"). */
  classify: (cmd: string) => string;
}

export interface MemPeak {
  /** Peak of the summed RSS of the whole tree, bytes. */
  rss: number;
  /** Peak of the summed PSS (shared pages split between processes), bytes. */
  pss: number;
  /** Peak RSS per category (each category's own peak). */
  byCategory: Record<string, number>;
  processes: number;
}

/**
 * Samples RSS of every group's process tree every `everyMs` (PSS, costlier, every 5th sample)
 * and keeps the peaks. RSS double-counts pages shared between a browser's processes; PSS does not.
 */
export class MemSampler {
  private timer: NodeJS.Timeout | undefined;
  private cmdCache = new Map<number, string>();
  readonly peaks = new Map<string, MemPeak>();
  private tick = 0;

  constructor(private readonly groups: Map<string, MemGroup>, private readonly everyMs = 500) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.sample();
  }

  sample(): void {
    const procs = readProcs();
    const kids = new Map<number, number[]>();
    for (const [pid, p] of procs) {
      const k = kids.get(p.ppid);
      if (k) k.push(pid);
      else kids.set(p.ppid, [pid]);
    }
    const withPss = this.tick++ % 5 === 0;
    for (const [name, g] of this.groups) {
      const seen = new Set<number>();
      const stack = g.roots().filter((p) => procs.has(p));
      while (stack.length) {
        const p = stack.pop() as number;
        if (seen.has(p)) continue;
        seen.add(p);
        for (const c of kids.get(p) ?? []) stack.push(c);
      }
      if (!seen.size) continue;
      let rss = 0;
      let pssSum = 0;
      const cats: Record<string, number> = {};
      for (const p of seen) {
        let cmd = this.cmdCache.get(p);
        if (cmd === undefined) {
          cmd = cmdline(p);
          this.cmdCache.set(p, cmd);
        }
        const r = procs.get(p)?.rss ?? 0;
        rss += r;
        const c = g.classify(cmd);
        cats[c] = (cats[c] ?? 0) + r;
        if (withPss) pssSum += pss(p);
      }
      const peak = this.peaks.get(name) ?? { rss: 0, pss: 0, byCategory: {}, processes: 0 };
      peak.rss = Math.max(peak.rss, rss);
      if (withPss) peak.pss = Math.max(peak.pss, pssSum);
      peak.processes = Math.max(peak.processes, seen.size);
      for (const [c, v] of Object.entries(cats)) peak.byCategory[c] = Math.max(peak.byCategory[c] ?? 0, v);
      this.peaks.set(name, peak);
    }
  }
}

/** A Chromium process's role, from its command line. */
export function chromeRole(cmd: string): string {
  if (cmd.includes("--extension-process")) return "extension";
  const t = /--type=([a-z-]+)/.exec(cmd);
  return t ? `browser:${t[1]}` : "browser:main";
}

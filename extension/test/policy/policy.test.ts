import { describe, expect, it, vi } from "vitest";
import { actAllowed, approvalChoice, defaultPolicy, evalAllowed, judgeUrl, normalizePolicy, passwordAllowed, permissivePolicy, withRule } from "../../src/policy/policy.js";
import { ApprovalQueue, maskSecret } from "../../src/policy/approvals.js";
import { AUDIT_MAX, AuditRing, auditToCSV, cleanEntry, type AuditEntry } from "../../src/policy/audit.js";

describe("policy decisions", () => {
  it("is empty and closed by default", () => {
    const p = defaultPolicy();
    expect(p.rules).toEqual([]);
    expect(p.actMode).toBe(false);
    expect(judgeUrl(p, "https://example.com/").allowed).toBe(false);
  });

  it("act mode: global or per origin", () => {
    let p = withRule(defaultPolicy(), { pattern: "a.com" });
    p = withRule(p, { pattern: "b.com", act: true });
    expect(actAllowed(p, judgeUrl(p, "https://a.com/"))).toBe(false);
    expect(actAllowed(p, judgeUrl(p, "https://b.com/"))).toBe(true);
    expect(actAllowed({ ...p, actMode: true }, judgeUrl(p, "https://a.com/"))).toBe(true);
    expect(actAllowed({ ...p, actMode: true }, judgeUrl(p, "https://c.com/"))).toBe(false);
  });

  it("expression, program and fetch are separate switches, off even in permissive mode", () => {
    const p = withRule(defaultPolicy(), { pattern: "a.com", evalExpression: true });
    const v = judgeUrl(p, "https://a.com/");
    expect(evalAllowed(v, "expression")).toBe(true);
    expect(evalAllowed(v, "program")).toBe(false);
    expect(evalAllowed(v, "fetch")).toBe(false);
    const perm = permissivePolicy();
    expect(evalAllowed(judgeUrl(perm, "https://x.com/"), "expression")).toBe(false);
  });

  it("the most specific rule wins", () => {
    let p = withRule(defaultPolicy(), { pattern: "*.a.com", evalProgram: true });
    p = withRule(p, { pattern: "secure.a.com" });
    expect(evalAllowed(judgeUrl(p, "https://secure.a.com/"), "program")).toBe(false);
    expect(evalAllowed(judgeUrl(p, "https://www.a.com/"), "program")).toBe(true);
  });

  it("password needs the call's flag and the origin's switch", () => {
    const p = withRule(defaultPolicy(), { pattern: "a.com", allowPassword: true });
    const v = judgeUrl(p, "https://a.com/");
    expect(passwordAllowed(v, false)).toBe(false);
    expect(passwordAllowed(v, true)).toBe(true);
    expect(passwordAllowed(judgeUrl(permissivePolicy(), "https://a.com/"), true)).toBe(false);
  });

  it("approval choices: origin override, then default; blocked origins deny", () => {
    const p = withRule(defaultPolicy(), { pattern: "a.com", approvals: { submit: "allow" } });
    expect(approvalChoice(p, judgeUrl(p, "https://a.com/"), "submit")).toBe("allow");
    expect(approvalChoice(p, judgeUrl(p, "https://a.com/"), "destructive_click")).toBe("ask");
    expect(approvalChoice(p, judgeUrl(p, "https://z.com/"), "submit")).toBe("deny");
  });

  it("normalisation drops junk and bad patterns", () => {
    const p = normalizePolicy({ actMode: "yes", rules: [{ pattern: "*" }, { pattern: "ok.com", act: 1, evalProgram: true }, 5], approvals: { submit: "maybe" }, approvalTimeoutMs: 1 });
    expect(p.actMode).toBe(false);
    expect(p.rules).toEqual([{ pattern: "ok.com", evalProgram: true }]);
    expect(p.approvals.submit).toBe("ask");
    expect(p.approvalTimeoutMs).toBe(1000);
  });
});

describe("approval queue", () => {
  it("approve, deny, timeout, cancel", async () => {
    vi.useFakeTimers();
    try {
      const shown: string[] = [];
      const q = new ApprovalQueue({ show: (r) => shown.push(r.id) });
      const base = { kind: "submit" as const, tool: "click", origin: "https://a.com" };
      const a = q.ask(base, 1000);
      q.decide(shown[0] as string, true);
      expect(await a).toBe("approved");
      const d = q.ask(base, 1000);
      q.decide(shown[1] as string, false);
      expect(await d).toBe("denied");
      const t = q.ask(base, 1000);
      vi.advanceTimersByTime(1001);
      expect(await t).toBe("timeout");
      expect(q.decide(shown[2] as string, true)).toBe(false);
      const ctl = new AbortController();
      const c = q.ask(base, 1000, ctl.signal);
      ctl.abort();
      expect(await c).toBe("cancelled");
      expect(q.list()).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });
  it("SECURITY I-80: when no one can answer, refused at once, never shown, never approved", async () => {
    const shown: string[] = [];
    const base = { kind: "submit" as const, tool: "click", origin: "https://a.com" };
    const none = new ApprovalQueue({ show: (r) => shown.push(r.id), unanswerable: async () => true });
    const t0 = Date.now();
    expect(await none.ask(base, 30_000)).toBe("unanswerable");
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(shown).toEqual([]);
    expect(none.list()).toEqual([]);
    // A fact that cannot be read is taken as "no one can answer": a refusal, never a wait or a yes.
    const broken = new ApprovalQueue({ show: (r) => shown.push(r.id), unanswerable: () => Promise.reject(new Error("storage gone")) });
    expect(await broken.ask(base, 30_000)).toBe("unanswerable");
    expect(shown).toEqual([]);
    // Someone can answer: asked as before.
    const someone = new ApprovalQueue({ show: (r) => shown.push(r.id), unanswerable: async () => false });
    const a = someone.ask(base, 30_000);
    await vi.waitFor(() => expect(shown).toHaveLength(1));
    someone.decide(shown[0] as string, true);
    expect(await a).toBe("approved");
  });
  it("masks secrets", () => {
    expect(maskSecret("hunter2")).not.toContain("hunter2");
  });
});

describe("audit ring", () => {
  /** chrome.storage.local as the ring sees it, remembering what each save wrote. */
  const mem = () => {
    const data = new Map<string, unknown>();
    const writes: { keys: string[]; bytes: number }[] = [];
    const copy = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;
    return {
      data,
      writes,
      get: async (keys: string[]) => Object.fromEntries(keys.filter((k) => data.has(k)).map((k) => [k, copy(data.get(k))])),
      set: async (items: Record<string, unknown>) => {
        writes.push({ keys: Object.keys(items), bytes: JSON.stringify(items).length });
        for (const [k, v] of Object.entries(items)) data.set(k, copy(v));
      },
      remove: async (keys: string[]) => void keys.forEach((k) => data.delete(k)),
    };
  };
  const entry = (i: number): AuditEntry => ({ ts: i, tool: "click", origin: "https://a.com", outcome: "ok", ms: 1 });

  it("keeps the latest 500, newest first, metadata only", async () => {
    const m = mem();
    const r = new AuditRing(m, AUDIT_MAX, 0);
    for (let i = 0; i < 520; i++) await r.record(entry(i));
    const l = await r.list();
    expect(l.length).toBe(500);
    expect(l[0]?.ts).toBe(519);
    expect(l[499]?.ts).toBe(20);
  });

  it("a save writes only what changed; a new worker reads back the same 500, old buckets gone", async () => {
    const m = mem();
    const r = new AuditRing(m, AUDIT_MAX, 60_000);
    for (let i = 0; i < 1_234; i++) {
      await r.record(entry(i));
      if (i % 7 === 0) await r.flush();
    }
    await r.flush();
    // Each save: the range and the one or two buckets new entries went into, never the whole ring.
    expect(Math.max(...m.writes.map((w) => w.keys.length))).toBeLessThanOrEqual(3);
    const whole = JSON.stringify(await r.list()).length;
    expect(Math.max(...m.writes.map((w) => w.bytes))).toBeLessThan(whole / 4);
    // 500 entries in buckets of 50 span at most 11 buckets, plus the range.
    expect(m.data.size).toBeLessThanOrEqual(12);
    const again = await new AuditRing(m).list();
    expect(again.map((e) => e.ts)).toEqual((await r.list()).map((e) => e.ts));
    expect(again[0]?.ts).toBe(1_233);
    expect(again.at(-1)?.ts).toBe(734);
  });

  it("an older build's single array is read, then stored as buckets; clear empties it for good", async () => {
    const m = mem();
    m.data.set("audit", [entry(1), { ...entry(2), text: "SECRET" }]);
    const r = new AuditRing(m, AUDIT_MAX, 60_000);
    expect((await r.list()).map((e) => e.ts)).toEqual([2, 1]);
    await r.record(entry(3));
    await r.flush();
    expect(Array.isArray(m.data.get("audit"))).toBe(false);
    expect(JSON.stringify([...m.data])).not.toContain("SECRET");
    expect((await new AuditRing(m).list()).map((e) => e.ts)).toEqual([3, 2, 1]);
    await r.clear();
    expect(await new AuditRing(m).list()).toEqual([]);
    expect([...m.data.keys()]).toEqual(["audit"]);
    await r.record(entry(4));
    await r.flush();
    expect((await new AuditRing(m).list()).map((e) => e.ts)).toEqual([4]);
  });

  it("a damaged store (range or buckets not what was written) reads as what is intact, and recording goes on", async () => {
    for (const damage of [{ audit: { first: "x", next: 3 } }, { audit: { first: 0, next: 120 }, "audit.0": "junk", "audit.1": { s: "y", e: 1 } }, { audit: 42 }]) {
      const m = mem();
      for (const [k, v] of Object.entries(damage)) m.data.set(k, v);
      const r = new AuditRing(m, AUDIT_MAX, 60_000);
      expect(await r.list()).toEqual([]);
      await r.record(entry(7));
      await r.flush();
      expect((await new AuditRing(m).list()).map((e) => e.ts)).toEqual([7]);
    }
  });

  it("drops anything that is not metadata", () => {
    const e = cleanEntry({ ts: 1, tool: "type", origin: "", outcome: "ok", ms: 2, text: "SECRET", args: { text: "SECRET" } } as unknown as AuditEntry);
    expect(JSON.stringify(e)).not.toContain("SECRET");
  });
  it("exports CSV with formula guard", () => {
    const csv = auditToCSV([{ ts: 0, tool: "click", origin: "=cmd", outcome: "ok", ms: 1 }]);
    expect(csv.split("\n")[0]).toBe("ts,tool,session,origin,outcome,code,ms,approval,detail,secrets");
    expect(csv).toContain("'=cmd");
  });
});

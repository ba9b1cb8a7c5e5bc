// The worker's record of the documents that hold a secret and the session rules it keeps in the
// browser for them (SECURITY I-76), against a fake browser: the rules are in before a fill may go
// on, they end with the document (another one in its frame, its tab's top, its tab closing, the
// browser no longer knowing it), a document kept by the back/forward cache holds again when
// restored, a refused rule update lets nothing be filled, and a restarted worker keeps all of it.
import { describe, expect, it, vi } from "vitest";
import { installFakeChrome } from "../fake-chrome.js";
import type { HeldDoc, Rule } from "../../src/secrets/netrules.js";

const A = "https://a.example";
const A2 = "https://a2.example";

/** A fake browser with session rules and documents the test says are live, cached or gone. */
function browser(store?: Record<string, unknown>, rules: Rule[] = []) {
  const b = installFakeChrome();
  if (store) Object.assign(b.store, structuredClone(store));
  const docs = new Map<string, "active" | "cached">();
  const dnr = { rules, fail: false };
  const c = b.chrome as unknown as Record<string, unknown> & { webNavigation: Record<string, unknown> };
  c.declarativeNetRequest = {
    getSessionRules: async () => structuredClone(dnr.rules),
    updateSessionRules: async (o: { removeRuleIds?: number[]; addRules?: Rule[] }) => {
      if (dnr.fail) throw new Error("rule limit");
      dnr.rules = [...dnr.rules.filter((r) => !o.removeRuleIds?.includes(r.id)), ...(o.addRules ?? [])];
    },
  };
  c.webNavigation.getFrame = async (f: { documentId?: string }) => {
    const l = f.documentId ? docs.get(f.documentId) : undefined;
    return l ? { documentId: f.documentId, documentLifecycle: l } : null;
  };
  const commit = (tabId: number, frameId: number, documentId: string) =>
    b.on.webNavigation.onCommitted.fire({ tabId, frameId, documentId, url: `${A}/next`, parentFrameId: -1, processId: 1, timeStamp: 0, transitionType: "link", transitionQualifiers: [] } as never);
  return { b, docs, dnr, commit };
}

async function load() {
  vi.resetModules();
  const m = await import("../../src/tools/secret-net.js");
  m.installSecretNet();
  return m;
}

/** Waits until the worker's rules satisfy `ok` (its listeners run asynchronously). */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(ok()).toBe(true);
}

const blocks = (rules: Rule[], tabId: number) => rules.filter((r) => r.action.type === "block" && r.condition.tabIds?.includes(tabId));

describe("documents that hold a secret", () => {
  it("the rules are in the browser when the hold resolves; the record has ids and origins only", async () => {
    const { b, docs, dnr } = browser();
    const tab = b.addTab();
    docs.set("D1", "active");
    const m = await load();
    await m.holdSecretsIn(tab, 0, "D1", A, [[A, A2], [A]]);
    expect(blocks(dnr.rules, tab).length).toBeGreaterThan(0);
    expect(m.tabHoldsSecret(tab)).toBe(true);
    const held = b.store.secretHolds as HeldDoc[];
    expect(held).toEqual([expect.objectContaining({ tabId: tab, frameId: 0, documentId: "D1", origin: A, origins: [A] })]);
    // Allowed: only the origin both secrets are bound to.
    expect(dnr.rules.filter((r) => r.action.type === "allow").map((r) => r.condition.urlFilter)).toContain(`|${A}/`);
    expect(dnr.rules.some((r) => r.condition.urlFilter === `|${A2}/`)).toBe(false);
  });

  it("another document in its frame ends it; a frame elsewhere does not; the tab's top ends its frames' too", async () => {
    const { b, docs, dnr, commit } = browser();
    const tab = b.addTab();
    docs.set("D1", "active");
    docs.set("F1", "active");
    const m = await load();
    await m.holdSecretsIn(tab, 0, "D1", A, [[A]]);
    await m.holdSecretsIn(tab, 3, "F1", A, [[A]]);
    // Commits are handled in order: once frame 3's has dropped F1, frame 5's has been handled too.
    commit(tab, 5, "X");
    commit(tab, 3, "F2");
    await until(() => (b.store.secretHolds as HeldDoc[]).length === 1);
    expect((b.store.secretHolds as HeldDoc[]).map((d) => d.documentId)).toEqual(["D1"]);
    docs.delete("D1");
    commit(tab, 0, "D2");
    await until(() => dnr.rules.length === 0);
    expect(m.tabHoldsSecret(tab)).toBe(false);
  });

  it("its tab closing ends it", async () => {
    const { b, docs, dnr } = browser();
    const tab = b.addTab();
    docs.set("D1", "active");
    const m = await load();
    await m.holdSecretsIn(tab, 0, "D1", A, [[A]]);
    b.closeTab(tab);
    await until(() => dnr.rules.length === 0);
  });

  it("a document the back/forward cache keeps holds again when it is restored", async () => {
    const { b, docs, dnr, commit } = browser();
    const tab = b.addTab();
    docs.set("D1", "active");
    const m = await load();
    await m.holdSecretsIn(tab, 0, "D1", A, [[A]]);
    docs.set("D1", "cached");
    docs.set("D2", "active");
    commit(tab, 0, "D2");
    await until(() => dnr.rules.length === 0);
    docs.set("D1", "active");
    commit(tab, 0, "D1");
    await until(() => blocks(dnr.rules, tab).length > 0);
  });

  it("a document that went before its hold was recorded: refused, no rule left behind", async () => {
    const { b, dnr } = browser();
    const tab = b.addTab();
    const m = await load();
    await expect(m.holdSecretsIn(tab, 0, "GONE", A, [[A]])).rejects.toMatchObject({ code: "navigation_failed" });
    expect(dnr.rules).toEqual([]);
    expect(m.tabHoldsSecret(tab)).toBe(false);
  });

  it("rules the browser refuses: the hold throws (nothing may be filled)", async () => {
    const { b, docs, dnr } = browser();
    const tab = b.addTab();
    docs.set("D1", "active");
    dnr.fail = true;
    const m = await load();
    await expect(m.holdSecretsIn(tab, 0, "D1", A, [[A]])).rejects.toMatchObject({ code: "internal" });
  });

  it("a restarted worker keeps the set and the rules, drops what ended meanwhile, and ends the rest with its document", async () => {
    const first = browser();
    const t1 = first.b.addTab();
    const t2 = first.b.addTab();
    first.docs.set("D1", "active");
    first.docs.set("D2", "active");
    const m1 = await load();
    await m1.holdSecretsIn(t1, 0, "D1", A, [[A]]);
    await m1.holdSecretsIn(t2, 0, "D2", A, [[A]]);
    // The worker stops; D2 goes while it is stopped. A new worker starts from what the browser kept.
    const again = browser(first.b.store, first.dnr.rules);
    again.b.addTab({ id: t1 });
    again.docs.set("D1", "active");
    const m2 = await load();
    await until(() => (again.b.store.secretHolds as HeldDoc[]).map((d) => d.documentId).join() === "D1");
    expect(blocks(again.dnr.rules, t1).length).toBeGreaterThan(0);
    expect(blocks(again.dnr.rules, t2)).toEqual([]);
    expect(m2.tabHoldsSecret(t1)).toBe(true);
    again.docs.delete("D1");
    again.commit(t1, 0, "D3");
    await until(() => again.dnr.rules.length === 0);
  });
});

// The network rules that keep a held secret to its origins (SECURITY I-76), evaluated here with
// declarativeNetRequest's own matching (highest priority wins, allow over block at a tie, a rule
// without resource types matches all but main_frame). The browser applying them is covered in
// real Chromium (e2e adversarial-secrets-origin).
import { describe, expect, it } from "vitest";
import { netRules, RULE_BASE, RULE_SPAN, type HeldDoc, type Rule } from "../../src/secrets/netrules.js";

interface Req {
  tabId: number;
  /** The initiating document's host; undefined for the browser's own (address bar). */
  initiator?: string;
  type: string;
  url: string;
}

const domainMatch = (host: string, list: string[]) => list.some((d) => host === d || host.endsWith(`.${d}`));

function matches(r: Rule, q: Req): boolean {
  const c = r.condition;
  if (c.tabIds && !c.tabIds.includes(q.tabId)) return false;
  if (c.excludedTabIds?.includes(q.tabId)) return false;
  if (c.initiatorDomains && (q.initiator === undefined || !domainMatch(q.initiator, c.initiatorDomains))) return false;
  if (c.excludedInitiatorDomains && q.initiator !== undefined && domainMatch(q.initiator, c.excludedInitiatorDomains)) return false;
  const types = c.resourceTypes as string[] | undefined;
  if (types ? !types.includes(q.type) : q.type === "main_frame") return false;
  if (c.urlFilter) {
    if (!c.urlFilter.startsWith("|")) throw new Error(`unexpected urlFilter ${c.urlFilter}`);
    if (!q.url.toLowerCase().startsWith(c.urlFilter.slice(1).toLowerCase())) return false;
  }
  return true;
}

/** What the browser does with a request under these rules. */
function verdict(rules: Rule[], q: Req): "blocked" | "passes" {
  const hit = rules.filter((r) => matches(r, q)).sort((a, b) => (b.priority ?? 1) - (a.priority ?? 1) || (a.action.type === "allow" ? -1 : 1))[0];
  return hit?.action.type === "block" ? "blocked" : "passes";
}

const A = "https://a.example";
const A2 = "https://a2.example";
const C = "https://c.example";
const top = (o: Partial<HeldDoc> = {}): HeldDoc => ({ tabId: 7, frameId: 0, documentId: "D1", origin: A, origins: [A], before: [1, 2], ...o });

describe("network rules of a document that holds a secret", () => {
  it("no held document, no rules", () => {
    expect(netRules([])).toEqual([]);
  });

  it("its tab reaches the secret's origins only, by any kind of request but its own top-level navigations", () => {
    const rules = netRules([top()]);
    for (const type of ["xmlhttprequest", "ping", "image", "sub_frame", "script", "websocket", "other"]) {
      expect(verdict(rules, { tabId: 7, initiator: "a.example", type, url: `${A2}/x?v=1` }), type).toBe("blocked");
      expect(verdict(rules, { tabId: 7, initiator: "c.example", type, url: `${C}/x` }), type).toBe("blocked");
      expect(verdict(rules, { tabId: 7, initiator: "a.example", type, url: `${A}/x` }), type).toBe("passes");
    }
    expect(verdict(rules, { tabId: 7, initiator: "a.example", type: "websocket", url: "wss://a.example/socket" })).toBe("passes");
    expect(verdict(rules, { tabId: 7, initiator: "a.example", type: "websocket", url: "ws://a.example/socket" })).toBe("blocked");
    // A look-alike of the origin is another origin.
    expect(verdict(rules, { tabId: 7, initiator: "a.example", type: "image", url: "https://a.example.c.example/x" })).toBe("blocked");
    expect(verdict(rules, { tabId: 7, initiator: "a.example", type: "image", url: "https://a.example:8443/x" })).toBe("blocked");
    // The top document's navigations are its guard's; a redirect its own origin answers is that origin's.
    expect(verdict(rules, { tabId: 7, initiator: "a.example", type: "main_frame", url: `${A2}/after-login` })).toBe("passes");
    expect(verdict(rules, { tabId: 7, type: "main_frame", url: `${C}/typed-by-the-person` })).toBe("passes");
  });

  it("popups and workers of its host are held too; tabs that were open before are not", () => {
    const rules = netRules([top()]);
    for (const type of ["main_frame", "xmlhttprequest", "image"]) {
      expect(verdict(rules, { tabId: 99, initiator: "a.example", type, url: `${C}/x` }), type).toBe("blocked");
      expect(verdict(rules, { tabId: -1, initiator: "a.example", type, url: `${C}/x` }), type).toBe("blocked");
      expect(verdict(rules, { tabId: 99, initiator: "a.example", type, url: `${A}/x` }), type).toBe("passes");
      expect(verdict(rules, { tabId: 1, initiator: "a.example", type, url: `${C}/x` }), type).toBe("passes");
      expect(verdict(rules, { tabId: 99, initiator: "c.example", type, url: `${C}/x` }), type).toBe("passes");
    }
  });

  it("a secret held in a frame: the top-level navigations its host starts are held as well", () => {
    const rules = netRules([top({ frameId: 3 })]);
    expect(verdict(rules, { tabId: 7, initiator: "a.example", type: "main_frame", url: `${A2}/x?v=1` })).toBe("blocked");
    expect(verdict(rules, { tabId: 7, initiator: "a.example", type: "main_frame", url: `${A}/next` })).toBe("passes");
    expect(verdict(rules, { tabId: 7, type: "main_frame", url: `${A2}/typed` })).toBe("passes");
  });

  it("two documents of one tab: only origins both secrets may go to", () => {
    const rules = netRules([top({ origins: [A, A2] }), top({ documentId: "D2", frameId: 4, origins: [A] })]);
    expect(verdict(rules, { tabId: 7, initiator: "a.example", type: "xmlhttprequest", url: `${A2}/x` })).toBe("blocked");
    expect(verdict(rules, { tabId: 7, initiator: "a.example", type: "xmlhttprequest", url: `${A}/x` })).toBe("passes");
  });

  it("two tabs with secrets bound elsewhere never open each other's rules", () => {
    const rules = netRules([top(), top({ tabId: 8, documentId: "D9", origin: C, origins: [C], before: [1, 2, 7] })]);
    // Tab 8's secret may go to C only: tab 7's allow for A never reaches it, nor the reverse.
    expect(verdict(rules, { tabId: 8, initiator: "c.example", type: "xmlhttprequest", url: `${A}/x` })).toBe("blocked");
    expect(verdict(rules, { tabId: 7, initiator: "a.example", type: "xmlhttprequest", url: `${C}/x` })).toBe("blocked");
    expect(verdict(rules, { tabId: 8, initiator: "c.example", type: "xmlhttprequest", url: `${C}/x` })).toBe("passes");
    expect(verdict(rules, { tabId: 7, initiator: "a.example", type: "xmlhttprequest", url: `${A}/x` })).toBe("passes");
    // A popup of A's host (a new tab) reaches A and nothing else; one of C's host reaches C.
    expect(verdict(rules, { tabId: 50, initiator: "a.example", type: "xmlhttprequest", url: `${C}/x` })).toBe("blocked");
    expect(verdict(rules, { tabId: 50, initiator: "c.example", type: "xmlhttprequest", url: `${A}/x` })).toBe("blocked");
  });

  it("ids stay in the reserved range, each once", () => {
    const rules = netRules([top({ origins: [A, A2] }), top({ tabId: 8, documentId: "D9", frameId: 2 })]);
    const ids = rules.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id >= RULE_BASE && id < RULE_BASE + RULE_SPAN).toBe(true);
  });
});

// The network half of "a secret goes only to its own origin" (SECURITY I-76): while a document holds
// a secret, the browser itself refuses the requests that could carry it elsewhere, whatever script
// sends them and however it encodes the value. Pure: the declarativeNetRequest session rules for a
// set of held documents; tools/secret-net.ts keeps the set and installs them.
//
// For each tab T whose documents hold secrets, with O the origins every one of those secrets is
// bound to and H the hosts of those documents:
// - every request of T (frames, scripts, images, fetch, beacons, WebSockets…) except the tab's own
//   top-level navigations, to an origin outside O: blocked. The top document's navigations are its
//   guard's (the navigate event, with the real URL); a redirect a bound origin answers with is that
//   origin's, which was trusted with the value;
// - T's top-level navigations started by a document of H, when a secret is held in a frame (the
//   frame's script can navigate the top, and the top's guard holds nothing);
// - requests started by a document of H in any tab opened since (a popup, `target=_blank`) and in
//   workers (tab id -1), to an origin outside O.
// A request to an origin of O (its http(s) and ws(s) form) is let through by an allow rule of the
// same scope at a higher priority; an allow rule never reaches a request another tab's block covers
// for that origin (it excludes that tab and its documents' hosts), so two tabs with different
// secrets never open each other's rules.

export type Rule = chrome.declarativeNetRequest.Rule;
type Condition = chrome.declarativeNetRequest.RuleCondition;
type ResourceType = `${chrome.declarativeNetRequest.ResourceType}`;

/** A document that received a secret, and where its secrets may go. */
export interface HeldDoc {
  tabId: number;
  frameId: number;
  documentId: string;
  /** The document's own origin (where its secrets were filled). */
  origin: string;
  /** The origins every secret put into it is bound to. */
  origins: string[];
  /** The other tabs that were open when its first secret landed (not covered by the popup rule). */
  before: number[];
}

/** Our rules' ids start here; the worker replaces every rule in [RULE_BASE, RULE_BASE + RULE_SPAN). */
export const RULE_BASE = 760_000;
export const RULE_SPAN = 20_000;

const ALL_TYPES: ResourceType[] = [
  "main_frame", "sub_frame", "stylesheet", "script", "image", "font", "object", "xmlhttprequest", "ping", "csp_report", "media",
  "websocket", "webtransport", "webbundle", "other",
];
const BLOCK = 1;
const ALLOW = 2;

function hostOf(origin: string): string | undefined {
  try {
    const h = new URL(origin).hostname;
    return h || undefined;
  } catch {
    return undefined;
  }
}

/** An origin's URL prefixes: itself, and its WebSocket form (a ws(s) connection goes to the same server). */
function prefixes(origin: string): string[] {
  const out = [`${origin}/`];
  if (origin.startsWith("https://")) out.push(`wss://${origin.slice(8)}/`);
  else if (origin.startsWith("http://")) out.push(`ws://${origin.slice(7)}/`);
  return out;
}

interface TabHold {
  tabId: number;
  origins: Set<string>;
  hosts: string[];
  /** Hosts of documents that hold a secret in a frame (not the top). */
  frameHosts: string[];
  before: number[];
}

function byTab(docs: readonly HeldDoc[]): TabHold[] {
  const out = new Map<number, TabHold>();
  for (const d of docs) {
    const h = hostOf(d.origin);
    let t = out.get(d.tabId);
    if (!t) {
      t = { tabId: d.tabId, origins: new Set(d.origins), hosts: [], frameHosts: [], before: [...d.before] };
      out.set(d.tabId, t);
    } else {
      const o = new Set(d.origins);
      t.origins = new Set([...t.origins].filter((x) => o.has(x)));
      // A tab left out of the popup rule must be one every document of this tab left out.
      t.before = t.before.filter((x) => d.before.includes(x));
    }
    if (h && !t.hosts.includes(h)) t.hosts.push(h);
    if (h && d.frameId !== 0 && !t.frameHosts.includes(h)) t.frameHosts.push(h);
  }
  return [...out.values()];
}

/** The session rules that hold every document's secrets to their origins. */
export function netRules(docs: readonly HeldDoc[]): Rule[] {
  const tabs = byTab(docs);
  const rules: Rule[] = [];
  const add = (priority: number, action: chrome.declarativeNetRequest.RuleActionType, condition: Condition) => {
    rules.push({ id: RULE_BASE + rules.length + 1, priority, action: { type: action }, condition });
  };
  for (const t of tabs) {
    const scopes: Condition[] = [{ tabIds: [t.tabId] }];
    if (t.frameHosts.length) scopes.push({ tabIds: [t.tabId], resourceTypes: ["main_frame"] as chrome.declarativeNetRequest.ResourceType[], initiatorDomains: t.frameHosts });
    if (t.hosts.length) {
      const excluded = [...new Set([...t.before, t.tabId])].filter((id) => id >= 0);
      scopes.push({ initiatorDomains: t.hosts, excludedTabIds: excluded, resourceTypes: ALL_TYPES as chrome.declarativeNetRequest.ResourceType[] });
    }
    for (const s of scopes) add(BLOCK, "block" as chrome.declarativeNetRequest.RuleActionType, s);
    for (const origin of [...t.origins].sort()) {
      // Other tabs whose secrets may not go to this origin: this allow must reach none of their requests.
      const others = tabs.filter((o) => o !== t && !o.origins.has(origin));
      const otherTabs = others.map((o) => o.tabId);
      const otherHosts = [...new Set(others.flatMap((o) => o.hosts))];
      for (const prefix of prefixes(origin)) {
        for (const s of scopes) {
          const c: Condition = { ...s, urlFilter: `|${prefix}` };
          if (otherHosts.length) c.excludedInitiatorDomains = otherHosts;
          if (s.excludedTabIds && otherTabs.length) c.excludedTabIds = [...new Set([...s.excludedTabIds, ...otherTabs])];
          add(ALLOW, "allow" as chrome.declarativeNetRequest.RuleActionType, c);
        }
      }
    }
  }
  if (rules.length > RULE_SPAN) throw new Error("too many held secrets to guard");
  return rules;
}

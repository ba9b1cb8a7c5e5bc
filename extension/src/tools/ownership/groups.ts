// Agents' tabs shown as theirs: each session's tabs sit in a Chrome tab group titled with its
// label, in its colour; a tab the person grants it sits in a group of the same look while the
// grant lasts. groupbook.ts decides (SECURITY I-83); this file asks Chrome, carries the decisions
// out and feeds Chrome's tab and group events back. Grouping never activates a tab or focuses a
// window (chrome.tabs.group and chrome.tabGroups.update do neither), and every step runs after the
// previous one, so each judges Chrome's state after the last change, its own included.
// The book lives in chrome.storage.session, like the ownership it follows (state.ts).

import {
  created,
  emptyBook,
  endedGrants,
  groupRemoved,
  groupSeen,
  joined,
  membersOf,
  planGrant,
  planOwned,
  releaseGrant,
  restoreBook,
  tabGone,
  tabMoved,
  type Book,
  type Plan,
  type SessionLook,
  type TabFacts,
} from "./groupbook.js";
import { load, onOwn, ownerOf, st } from "./state.js";

const KEY = "torii_groups";
const EXPIRY_ALARM = "torii-grant-groups";

let book: Book = emptyBook();
let loaded: Promise<void> | undefined;
let chain: Promise<void> = Promise.resolve();
let installed = false;

function loadBook(): Promise<void> {
  loaded ??= chrome.storage.session.get(KEY).then(
    (r) => void (book = restoreBook(r[KEY])),
    () => undefined,
  );
  return loaded;
}

/** Runs one step after the others; a step that fails (a tab gone meanwhile) leaves the rest be. */
function serial(step: () => Promise<void>): Promise<void> {
  chain = chain
    .then(async () => {
      await loadBook();
      const was = JSON.stringify(book);
      await step();
      if (JSON.stringify(book) !== was) await chrome.storage.session.set({ [KEY]: book });
    })
    .catch((e: unknown) => console.warn("torii: tab groups:", e instanceof Error ? e.message : String(e)));
  return chain;
}

async function factsOf(tabId: number): Promise<TabFacts | undefined> {
  const t = await chrome.tabs.get(tabId).catch(() => undefined);
  if (t?.id === undefined) return undefined;
  const w = await chrome.windows.get(t.windowId).catch(() => undefined);
  return { id: t.id, windowId: t.windowId, groupId: t.groupId ?? -1, pinned: t.pinned, normalWindow: w?.type === "normal" };
}

async function carryOut(p: Plan, t: TabFacts, sessionId: string, grantTab?: number): Promise<void> {
  if (p.do === "join") {
    await chrome.tabs.group({ groupId: p.groupId, tabIds: [t.id] });
    joined(book, p.groupId, t.id);
  } else if (p.do === "create") {
    const groupId = await chrome.tabs.group({ tabIds: [t.id], createProperties: { windowId: p.windowId } });
    created(book, { groupId, sessionId, windowId: p.windowId, title: p.title, color: p.color, ...(grantTab !== undefined ? { grantTab } : {}) }, t.id);
    await chrome.tabGroups.update(groupId, { title: p.title, color: p.color });
  }
}

function labelOf(sessionId: string): string {
  return st.sessions[sessionId]?.label ?? "";
}

/** A tab became a session's own (opened for it, or a popup its call set off): into its group. */
function groupOwned(tabId: number, sessionId: string): void {
  if (!installed) return;
  void serial(async () => {
    const t = await factsOf(tabId);
    if (!t || ownerOf(tabId)?.session !== sessionId) return;
    const p = planOwned(book, sessionId, labelOf(sessionId), t);
    try {
      await carryOut(p, t, sessionId);
    } catch (e) {
      if (p.do !== "join") throw e;
      // The group went meanwhile (its removal event is still on its way): judge that first.
      await removed(p.groupId);
      await carryOut(planOwned(book, sessionId, labelOf(sessionId), t), t, sessionId);
    }
  });
}

/**
 * Brings grant groups in line with the grants: a lasting grant's tab gets its group, an ended
 * one's leaves it (only if still in it). Called when the person grants or revokes, at start, and
 * when a grant expires.
 */
export function syncGrantGroups(): Promise<void> {
  if (!installed) return Promise.resolve();
  return serial(async () => {
    await load();
    const now = Date.now();
    const lasting = st.grants.filter((g) => g.expiresAt > now);
    for (const g of endedGrants(book, lasting)) {
      const t = await chrome.tabs.get(g.grantTab ?? -1).catch(() => undefined);
      const ungroup = releaseGrant(book, g.groupId, t?.groupId);
      if (ungroup !== undefined && t?.id !== undefined) await chrome.tabs.ungroup(t.id);
    }
    for (const g of lasting) {
      if (ownerOf(g.tabId) || Object.values(book.groups).some((x) => x.grantTab === g.tabId)) continue;
      const t = await factsOf(g.tabId);
      if (t) await carryOut(planGrant(book, g.sessionId, g.label, t), t, g.sessionId, g.tabId);
    }
    const next = Math.min(...lasting.map((g) => g.expiresAt));
    if (Number.isFinite(next)) await chrome.alarms.create(EXPIRY_ALARM, { when: next + 500 });
    else await chrome.alarms.clear(EXPIRY_ALARM);
  });
}

async function removed(groupId: number): Promise<void> {
  const g = book.groups[String(groupId)];
  if (!g) return;
  const open: number[] = [];
  for (const id of membersOf(book, groupId)) {
    const t = await chrome.tabs.get(id).catch(() => undefined);
    if (t && t.windowId === g.windowId) open.push(id);
  }
  groupRemoved(book, groupId, open);
}

/** The session's group look, for the popup: title, colour, and whether the person edited or removed it. */
export async function groupLook(sessionId: string): Promise<SessionLook | undefined> {
  if (!installed) return undefined;
  await loadBook();
  const l = book.looks[sessionId];
  return l && { ...l };
}

/** Registers the listeners (at service-worker start, from installOwnership). */
export function installGroups(): void {
  if (installed || !chrome.tabGroups || !chrome.tabs.group) return;
  installed = true;
  onOwn(groupOwned);
  chrome.tabs.onRemoved.addListener((tabId) => void serial(async () => tabGone(book, tabId)));
  chrome.tabs.onUpdated.addListener((tabId, info) => {
    if (info.groupId === undefined) return;
    void serial(async () => {
      const t = await chrome.tabs.get(tabId).catch(() => undefined);
      if (!t) return;
      const live = new Set((await chrome.tabGroups.query({})).map((g) => g.id));
      tabMoved(book, tabId, t.groupId ?? -1, (id) => live.has(id));
    });
  });
  chrome.tabGroups.onUpdated.addListener((g) => {
    void serial(async () => {
      // Chrome's state now, not the event's: the event may be the one Torii's own update caused.
      const now = await chrome.tabGroups.get(g.id).catch(() => undefined);
      if (now) groupSeen(book, now.id, now.title ?? "", now.color);
    });
  });
  chrome.tabGroups.onRemoved.addListener((g) => void serial(() => removed(g.id)));
  chrome.alarms.onAlarm.addListener((a) => {
    if (a.name === EXPIRY_ALARM) void syncGrantGroups();
  });
  void syncGrantGroups();
}

// The decisions behind agents' tab groups, as a pure state machine (groups.ts carries them out
// with chrome.tabs / chrome.tabGroups and feeds Chrome's events back in). No chrome.* API here.
//
// SECURITY I-83: Torii groups only a session's own tabs and tabs the person granted it, and the
// person's word on a group is final:
// - a tab already in a group (the person's, or one the person moved it to), pinned, or in a
//   window that cannot hold groups is left where it is;
// - a granted tab (the person's own) gets a group of its own where it stands, never joined to a
//   group elsewhere, since joining would move it; when the grant ends Torii takes it out only if
//   it is still in the group Torii made for it;
// - a tab the person takes out of a Torii group stays out;
// - a group the person renames or recolours keeps the person's title and colour, and later groups
//   of that session take them too;
// - a group the person removes while its tabs stay open (ungrouping it) ends grouping for that
//   session: nothing is grouped or recreated for it again. A group that goes because its tabs
//   closed (whoever closed them) is only forgotten.

import { groupTitle, isColour, pickColour, type Colour } from "./grouptitle.js";

/** How a session's groups look, and whether the person declined them. */
export interface SessionLook {
  title: string;
  color: Colour;
  /** The person renamed or recoloured one of its groups: their title and colour stand. */
  edited?: boolean;
  /** The person removed one of its groups: nothing more is grouped for it. */
  declined?: boolean;
}

/** A group Torii made. */
export interface GroupRec {
  groupId: number;
  sessionId: string;
  windowId: number;
  /** The granted tab this group was made for (a grant's group holds that tab only). */
  grantTab?: number;
  title: string;
  color: Colour;
  /** The tabs Torii put in it. */
  tabs: number[];
}

export interface Book {
  looks: Record<string, SessionLook>;
  /** By group id. */
  groups: Record<string, GroupRec>;
  /** Tabs the person took out of a Torii group: never grouped again. */
  out: number[];
}

export const emptyBook = (): Book => ({ looks: {}, groups: {}, out: [] });

/** What Chrome says of a tab, as far as grouping cares. */
export interface TabFacts {
  id: number;
  windowId: number;
  groupId: number;
  pinned: boolean;
  /** The tab's window is a normal one (popups and app windows hold no groups). */
  normalWindow: boolean;
}

export type Plan =
  | { do: "none"; why: string }
  | { do: "join"; groupId: number }
  | { do: "create"; windowId: number; title: string; color: Colour };

const NO_GROUP = -1;
/** Looks of sessions without a group are forgotten past this many. */
const MAX_LOOKS = 200;

/** The session's look, made on first use: the cleaned label and a colour other groups do not use. */
export function lookOf(b: Book, sessionId: string, label: string): SessionLook {
  const have = b.looks[sessionId];
  if (have) return have;
  const inUse = Object.values(b.groups).filter((g) => g.sessionId !== sessionId).map((g) => g.color);
  const look: SessionLook = { title: groupTitle(label), color: pickColour(sessionId, inUse) };
  b.looks[sessionId] = look;
  prune(b);
  return look;
}

function prune(b: Book): void {
  const ids = Object.keys(b.looks);
  if (ids.length <= MAX_LOOKS) return;
  const grouped = new Set(Object.values(b.groups).map((g) => g.sessionId));
  for (const id of ids.slice(0, ids.length - MAX_LOOKS)) if (!grouped.has(id)) delete b.looks[id];
}

function untouchable(b: Book, sessionId: string, t: TabFacts): string | undefined {
  if (b.looks[sessionId]?.declined) return "the person removed this session's group";
  if (b.out.includes(t.id)) return "the person took this tab out of its group";
  if (t.groupId !== NO_GROUP) return "the tab is in a group already";
  if (t.pinned) return "the tab is pinned";
  if (!t.normalWindow) return "its window cannot hold groups";
  return undefined;
}

/** A session's own tab: into the session's group in that window, made if there is none. */
export function planOwned(b: Book, sessionId: string, label: string, t: TabFacts): Plan {
  const why = untouchable(b, sessionId, t);
  if (why) return { do: "none", why };
  const g = Object.values(b.groups).find((x) => x.sessionId === sessionId && x.windowId === t.windowId && x.grantTab === undefined);
  if (g) return { do: "join", groupId: g.groupId };
  const look = lookOf(b, sessionId, label);
  return { do: "create", windowId: t.windowId, title: look.title, color: look.color };
}

/** A tab the person granted the session: a group of its own where it stands. */
export function planGrant(b: Book, sessionId: string, label: string, t: TabFacts): Plan {
  const why = untouchable(b, sessionId, t);
  if (why) return { do: "none", why };
  const look = lookOf(b, sessionId, label);
  return { do: "create", windowId: t.windowId, title: look.title, color: look.color };
}

/** Torii made a group (a plan's create went through). */
export function created(b: Book, rec: Omit<GroupRec, "tabs">, tabId: number): void {
  b.groups[String(rec.groupId)] = { ...rec, tabs: [tabId] };
}

/** Torii put a tab in one of its groups (a plan's join went through). */
export function joined(b: Book, groupId: number, tabId: number): void {
  const g = b.groups[String(groupId)];
  if (g && !g.tabs.includes(tabId)) g.tabs.push(tabId);
}

/**
 * A grant that no longer lasts: its group is forgotten, and the tab is to be taken out only when it
 * is still in that group (answers the group id to ungroup, or undefined).
 */
export function releaseGrant(b: Book, groupId: number, tabGroupNow: number | undefined): number | undefined {
  const g = b.groups[String(groupId)];
  if (!g) return undefined;
  delete b.groups[String(groupId)];
  return tabGroupNow === groupId ? groupId : undefined;
}

/** The grant groups whose grant no longer lasts, given the (session, tab) pairs that do. */
export function endedGrants(b: Book, lasting: { sessionId: string; tabId: number }[]): GroupRec[] {
  return Object.values(b.groups).filter((g) => g.grantTab !== undefined && !lasting.some((x) => x.sessionId === g.sessionId && x.tabId === g.grantTab));
}

/** Chrome says a Torii group now has this title and colour: if not Torii's, the person's stand. */
export function groupSeen(b: Book, groupId: number, title: string, color: string): void {
  const g = b.groups[String(groupId)];
  if (!g || (g.title === title && g.color === color) || !isColour(color)) return;
  g.title = title;
  g.color = color;
  const look = b.looks[g.sessionId];
  if (look) Object.assign(look, { title, color, edited: true });
}

/**
 * A tab Torii put in a group is now in another group or none. While that group still exists the
 * person took this one tab out: it stays out. When the group is gone the tab left with it, and
 * groupRemoved judges that.
 */
export function tabMoved(b: Book, tabId: number, groupNow: number, oldGroupExists: (groupId: number) => boolean): void {
  for (const g of Object.values(b.groups)) {
    if (!g.tabs.includes(tabId) || g.groupId === groupNow || !oldGroupExists(g.groupId)) continue;
    g.tabs = g.tabs.filter((x) => x !== tabId);
    if (!b.out.includes(tabId)) b.out.push(tabId);
  }
}

/** A tab closed: it leaves every record. */
export function tabGone(b: Book, tabId: number): void {
  for (const g of Object.values(b.groups)) g.tabs = g.tabs.filter((x) => x !== tabId);
  b.out = b.out.filter((x) => x !== tabId);
}

/** The tabs Torii put in the group and the person did not take out one by one. */
export function membersOf(b: Book, groupId: number): number[] {
  return [...(b.groups[String(groupId)]?.tabs ?? [])];
}

/**
 * Chrome removed a Torii group. `stillOpen`: which of its members (membersOf) are still open in
 * its window, that is the person ungrouped them rather than closed them. Answers whether the
 * session is now declined.
 */
export function groupRemoved(b: Book, groupId: number, stillOpen: number[]): boolean {
  const g = b.groups[String(groupId)];
  if (!g) return false;
  delete b.groups[String(groupId)];
  if (!stillOpen.some((t) => g.tabs.includes(t))) return false;
  const look = b.looks[g.sessionId];
  if (look) look.declined = true;
  return true;
}

/** Reads a stored book back, dropping anything malformed. */
export function restoreBook(v: unknown): Book {
  const b = emptyBook();
  if (!v || typeof v !== "object") return b;
  const o = v as Partial<Book>;
  for (const [k, l] of Object.entries(o.looks ?? {})) if (l && typeof l.title === "string" && isColour(l.color)) b.looks[k] = l;
  for (const [k, g] of Object.entries(o.groups ?? {})) if (g && typeof g.groupId === "number" && Array.isArray(g.tabs) && isColour(g.color)) b.groups[k] = g;
  if (Array.isArray(o.out)) b.out = o.out.filter((x) => typeof x === "number");
  return b;
}

// Where captures live: in the worker's memory, mirrored to chrome.storage.session (one key per
// capture), so a suspended and restarted worker finds them while nothing reaches chrome.storage.local
// or the disk: the session store is in memory and ends with the browser (SECURITY I-67). The
// session store is readable by the extension's own pages and worker only, never by content scripts.
// A capture is forgotten when its agent session ends.

import { release, type Budget } from "./record.js";
import type { Capture } from "./model.js";

const PREFIX = "torii_capture_";
/** Captures one session holds; the oldest stopped one is forgotten to make room. */
export const MAX_PER_SESSION = 8;
// A busy page changes its capture many times a second: written a moment after, not every time.
const SAVE_AFTER_MS = 250;

const captures = new Map<string, Capture>();
export const budget: Budget = { used: 0 };
const dirty = new Set<string>();
let timer: ReturnType<typeof setTimeout> | undefined;
let loaded: Promise<void> | undefined;

/** Reads the session store once per worker life. */
export function loadCaptures(): Promise<void> {
  loaded ??= chrome.storage.session.get(null).then(
    (all) => {
      for (const [k, v] of Object.entries(all)) {
        if (!k.startsWith(PREFIX) || !v || typeof v !== "object") continue;
        const c = v as Capture;
        if (captures.has(c.id)) continue;
        captures.set(c.id, c);
        budget.used += c.held;
      }
    },
    () => undefined,
  );
  return loaded;
}

export function getCapture(id: string): Capture | undefined {
  return captures.get(id);
}

export function allCaptures(): Capture[] {
  return [...captures.values()];
}

export function sessionCaptures(session: string): Capture[] {
  return allCaptures().filter((c) => c.session === session);
}

/** Adds a capture, forgetting the session's oldest stopped one when it holds MAX_PER_SESSION. */
export function addCapture(c: Capture): boolean {
  const mine = sessionCaptures(c.session);
  if (mine.length >= MAX_PER_SESSION) {
    const old = mine.filter((x) => x.stoppedAt !== undefined).sort((a, b) => a.startedAt - b.startedAt)[0];
    if (!old) return false;
    forgetCapture(old.id);
  }
  captures.set(c.id, c);
  changed(c);
  return true;
}

/** The capture changed: written to the session store shortly. */
export function changed(c: Capture): void {
  dirty.add(c.id);
  timer ??= setTimeout(flush, SAVE_AFTER_MS);
}

export async function flush(): Promise<void> {
  timer = undefined;
  const items: Record<string, unknown> = {};
  for (const id of dirty) {
    const c = captures.get(id);
    if (c) items[PREFIX + id] = c;
  }
  dirty.clear();
  if (Object.keys(items).length) await chrome.storage.session.set(items).catch(() => undefined);
}

export function forgetCapture(id: string): void {
  const c = captures.get(id);
  if (!c) return;
  captures.delete(id);
  dirty.delete(id);
  release(c, budget);
  void chrome.storage.session.remove(PREFIX + id).catch(() => undefined);
}

/** SECURITY I-67: the session ended; everything it captured goes. */
export async function forgetSession(session: string): Promise<void> {
  await loadCaptures();
  for (const c of sessionCaptures(session)) forgetCapture(c.id);
}

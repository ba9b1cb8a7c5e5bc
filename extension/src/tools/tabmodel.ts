// The browser's tabs as Chrome's events describe them, for `tabs` to list without asking the browser
// (a tabs.query is most of that cheapest call's time). Kept while its events account for every
// change; anything they do not describe exactly (a tab created, moved, attached, detached or
// swapped in) makes the next listing ask the browser again, and so does a change that arrives while
// the browser is being asked. Each listed tab is still judged from its own view (SECURITY I-14):
// a view at most one event old shows a page the agent could see a moment ago, never one it may not.

let tabs = new Map<number, chrome.tabs.Tab>();
// undefined: not asked yet; null: asked, and no window had focus (a headless browser's may never).
let focusedWindow: number | null | undefined;
let valid = false;
let changes = 0;
let watching = false;

function watch(): void {
  if (watching) return;
  watching = true;
  const stale = () => {
    changes++;
    valid = false;
  };
  chrome.tabs.onUpdated.addListener((id, _change, tab) => {
    changes++;
    tabs.set(id, tab);
  });
  chrome.tabs.onActivated.addListener(({ tabId, windowId }) => {
    changes++;
    for (const [id, t] of tabs) if (t.windowId === windowId && t.active !== (id === tabId)) tabs.set(id, { ...t, active: id === tabId });
    if (!tabs.has(tabId)) valid = false;
  });
  chrome.tabs.onRemoved.addListener((id) => {
    changes++;
    tabs.delete(id);
  });
  chrome.tabs.onCreated.addListener(stale);
  chrome.tabs.onMoved.addListener(stale);
  chrome.tabs.onAttached.addListener(stale);
  chrome.tabs.onDetached.addListener(stale);
  chrome.tabs.onReplaced.addListener(stale);
  chrome.windows.onFocusChanged.addListener((w) => {
    if (w !== chrome.windows.WINDOW_ID_NONE) focusedWindow = w;
  });
}

/** Every tab in the browser's order, and the active tab of the last focused window. */
export async function allTabs(query: () => Promise<chrome.tabs.Tab[]>): Promise<{ tabs: chrome.tabs.Tab[]; focused?: number }> {
  watch();
  if (!valid || focusedWindow === undefined) {
    const before = changes;
    const [all, [f]] = await Promise.all([query(), focusedWindow === undefined ? chrome.tabs.query({ active: true, lastFocusedWindow: true }) : [undefined]]);
    focusedWindow ??= f?.windowId ?? null;
    // A change during the question may or may not be in its answer: the answer is this listing's,
    // the next one asks again.
    if (changes === before) {
      tabs = new Map(all.flatMap((t) => (t.id === undefined ? [] : [[t.id, t] as const])));
      valid = true;
    }
    return { tabs: all, focused: all.find((t) => t.active && t.windowId === focusedWindow)?.id };
  }
  const list = [...tabs.values()].sort((a, b) => a.windowId - b.windowId || a.index - b.index);
  return { tabs: list, focused: list.find((t) => t.active && t.windowId === focusedWindow)?.id };
}

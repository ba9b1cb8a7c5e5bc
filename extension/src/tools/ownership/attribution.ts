// What the agent's own calls cause (SECURITY I-45, I-46). Chrome says a tab opened, was activated
// or that a window took focus, never who did it; this file feeds tools/provenance.ts (the pure
// timing rules) from the registry's calls and Chrome's events, and acts on its verdicts: a popup
// the agent's call set off is adopted as the agent's, and only the person's own look marks an
// agent tab looked (it keeps its prompts and is never evicted).

import { sleep } from "../../cdp/deadline.js";
import { CHROME_PICK_MS, Provenance, type CallMark, type CallShape } from "../provenance.js";
import { quiet, unquiet } from "./quiet.js";
import { ANONYMOUS, load, own, ownerOf, ownershipOn, save, st, type SessionRef } from "./state.js";

const prov = new Provenance();
/** The window the person last brought forward (not an agent window): focus goes back there. */
let personWindow: number | undefined;

/**
 * The registry marks each call while it runs (until endAgentCall): a popup a page opens in the
 * call's tab meanwhile (or just after) is the session's, and a focus or activation in that tab's
 * window meanwhile is not the person's attention. `gctx.tabId` is read when needed: the gate sets it.
 */
export function beginAgentCall(owner: SessionRef | undefined, tool: CallShape, gctx: { tabId?: number }): CallMark | undefined {
  if (!ownershipOn()) return undefined;
  return prov.begin((owner ?? ANONYMOUS).id, tool, () => gctx.tabId, Date.now());
}

/** The call returned (or was cancelled: what its handler still does after that is not its own). */
export function endAgentCall(m: CallMark | undefined): void {
  prov.end(m, Date.now());
  // Its window, while its tab still exists: a focus judged later may come after the tab closed.
  if (m?.focuses) void windowOfCall(m);
}

/** The window of a call's tab (looked up once); undefined when it has no tab or the tab is gone. */
async function windowOfCall(m: CallMark): Promise<number | undefined> {
  if (m.window !== undefined) return m.window;
  const t = m.tab();
  const w = t === undefined ? undefined : (await chrome.tabs.get(t).catch(() => undefined))?.windowId;
  if (w !== undefined) m.window = w;
  return w;
}

/**
 * Runs one of the extension's own tab or window operations (opening, closing, showing a tab, the
 * handoff): what it activates or focuses is not the person's attention (SECURITY I-46).
 */
export async function selfOp<T>(op: () => Promise<T>): Promise<T> {
  prov.selfBegin();
  try {
    return await op();
  } finally {
    prov.selfEnd(Date.now());
  }
}

/**
 * SECURITY I-45: a tab a page opened (Chrome's onCreatedNavigationTarget: popups, target=_blank,
 * window.open, and also the person's Ctrl+click or middle click on a link) becomes the opener
 * tab's owner's only when that owner's own effect-causing call was running on the opener tab
 * when Chrome created it, or had just ended (POPUP_GRACE_MS). tabs.onCreated's openerTabId is
 * not used: Chrome sets it for the person's new tab (Ctrl+T, a new page) too, to the window's
 * active tab (measured), not to the page that opened it. Not told apart: the person's own
 * Ctrl+click on an agent tab during the agent's call there (or within the grace) is the agent's.
 */
function adopt(child: number, opener: number, createdAt: number): void {
  if (ownerOf(child)) return;
  const r = ownerOf(opener);
  if (!r || !prov.openedByCall(r.session, opener, createdAt)) return;
  own(child, r.session);
  void quiet(child);
}

/**
 * SECURITY I-46: whether an activation of tabId (undefined: the window's focus) in windowId at
 * `at` was the person's. Chrome reports activation and focus without saying who caused them, and
 * an agent's call causes both: a CDP mouse press focuses the tab's window (measured in headless
 * Chromium), page code can close a tab so Chrome activates its neighbour or open one that Chrome
 * activates, and the extension activates tabs itself (screenshots, new tabs, closing). So it is the
 * person's only when, within ATTENTION_QUIET_MS before it, no agent call that puts input or code
 * into a page ran on a tab of that window, and neither an operation of the extension's own (while
 * it runs and CHROME_PICK_MS after) nor a tab of the window opening or closing (CHROME_PICK_MS
 * either side) explains it. Judged CHROME_PICK_MS later, so a tab removal Chrome reports just
 * after the activation is seen. Not told apart: the person switching to an agent tab while
 * such a call runs in its window, or just after; that switch is not counted (the next one is).
 */
async function personsAttention(tabId: number | undefined, windowId: number, at: number): Promise<boolean> {
  await sleep(CHROME_PICK_MS);
  await load();
  if (tabId !== undefined && !ownerOf(tabId)) return false;
  if (prov.explainedActivation(tabId, windowId, at)) return false;
  for (const m of prov.focusingCallsAround(at)) {
    const w = await windowOfCall(m);
    // A call with no tab yet, or on a tab gone before its window was known, may have been in any window.
    if (w === undefined || w === windowId) return false;
  }
  return true;
}

function markLooked(tabId: number): void {
  const r = ownerOf(tabId);
  if (!r || r.looked) return;
  r.looked = true;
  save();
  void unquiet(tabId);
}

/** Registers the tab and window events this file judges (at service-worker start, once). */
export function watchAttribution(): void {
  chrome.tabs.onCreated.addListener((t) => {
    if (t.id !== undefined) prov.tabCreated(t.id, t.windowId, Date.now());
  });
  // d.timeStamp is when Chrome was about to create the tab: judged against the calls then, not
  // when the event reached the worker.
  chrome.webNavigation.onCreatedNavigationTarget.addListener((d) => void load().then(() => adopt(d.tabId, d.sourceTabId, d.timeStamp)));
  chrome.tabs.onRemoved.addListener((tabId, info) => prov.tabGone(tabId, info?.windowId, Date.now()));
  chrome.tabs.onAttached?.addListener((_t, info) => prov.tabChanged(info.newWindowId, Date.now()));
  chrome.tabs.onDetached?.addListener((_t, info) => prov.tabChanged(info.oldWindowId, Date.now()));
  chrome.windows.onRemoved.addListener((w) => {
    if (personWindow === w) personWindow = undefined;
  });
  // Focus: an agent window never keeps the person's focus when Chrome brings it forward on the
  // extension's account (its own window or tab operations); a window the person brings forward
  // themselves stays, and the tab they look at is marked looked (it keeps its beforeunload prompts
  // and is never evicted). SECURITY I-46: Chrome's events do not say who moved focus, so an event
  // counts as the person's only when nothing else explains it (personsAttention).
  chrome.windows.onFocusChanged.addListener((w) => {
    if (w === chrome.windows.WINDOW_ID_NONE) return;
    const at = Date.now();
    const agent = Object.values(st.sessions).some((s) => s.window === w);
    if (!agent) {
      personWindow = w;
      return;
    }
    if (prov.selfActive(at) && personWindow !== undefined) {
      const back = personWindow;
      void selfOp(() => chrome.windows.update(back, { focused: true })).catch(() => undefined);
      return;
    }
    void personsAttention(undefined, w, at).then(async (yes) => {
      if (!yes) return;
      const [t] = await chrome.tabs.query({ active: true, windowId: w });
      if (t?.id !== undefined) markLooked(t.id);
    }).catch(() => undefined);
  });
  chrome.tabs.onActivated.addListener((a) => {
    const at = Date.now();
    void personsAttention(a.tabId, a.windowId, at).then(async (yes) => {
      if (!yes) return;
      const w = await chrome.windows.getLastFocused();
      if (w.focused && w.id === a.windowId) markLooked(a.tabId);
    }).catch(() => undefined);
  });
}

// Navigation: navigate (the session's current tab, a new tab or a given tab), history, reload.
// Each waits for the load through chrome.webNavigation and reports failures as navigation_failed.

import { cdp } from "../cdp/debugger.js";
import { left, withDeadline } from "../cdp/deadline.js";
import { defineTool, MAX_ARG_TIMEOUT_MS, MAX_TOOL_TIMEOUT_MS, type ToolContext } from "./define.js";
import { ToolError, toolError } from "./errors.js";
import { awaitLoad, callTab, guarded, resolveTab, topDocument, watchNav, type NavWatch } from "./browser.js";
import { act, ACTION_PROPS, S, type ActionArgs } from "./common.js";
import { openAgentTab } from "./ownership/open.js";
import { ownershipOn } from "./ownership/state.js";
import { assertUrlAllowed, BLANK_URL, isOpaqueBlank, judgeLanding, topFrameEvents } from "./origin.js";
import { captureLoad, captureReload } from "./observe/load.js";

/** A page load's default wait; an agent's timeoutMs may ask for up to MAX_ARG_TIMEOUT_MS. */
const LOAD_MS = 30_000;
/** What the call keeps after a load's deadline: its typed answer and the stop reach the agent first. */
const HANDLER_MARGIN_MS = 1_500;
const LOAD_HINT = `Check that the site is up, or call again with a larger timeoutMs (at most ${MAX_ARG_TIMEOUT_MS}).`;

const URL_HINT = "Give an absolute URL: a scheme (https://), a host and a path.";

/** The URL navigate opens; invalid_argument naming `url` when it is none (the gate asks first). */
function checkUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    // "example.com/path" → https://example.com/path
    if (/^[\w-]+(\.[\w-]+)+(:\d+)?(\/.*)?$/.test(url)) return checkUrl(`https://${url}`);
    throw toolError("invalid_argument", `url: not a URL: ${JSON.stringify(url.slice(0, 200))}`, URL_HINT, { field: "url" });
  }
  if (!["http:", "https:", "file:", "about:", "data:"].includes(u.protocol)) {
    throw toolError("invalid_argument", `url: scheme ${u.protocol} is not allowed`, URL_HINT, { field: "url" });
  }
  return u.href;
}

/** The URL opens a page, not a blank document (the watch then skips blank documents' loads). */
function toPage(url: string): boolean {
  return !/^about:/i.test(url);
}

/**
 * The load's deadline: the agent's timeoutMs from now, and a moment before the call's own, so the
 * navigation's own typed answer (and its stop, below) comes before the registry's abort.
 */
function loadUntil(ctx: ToolContext, timeoutMs: number): number {
  return Math.min(ctx.deadline - HANDLER_MARGIN_MS, Date.now() + timeoutMs);
}

/**
 * A navigation that did not start loading in time: the browser stops it here, while the call still
 * holds the tab, so it can neither land later under the agent's feet nor be aborted by the tab's
 * next navigation, whose watch would then take that abort for its own failure.
 */
async function notStarted(tabId: number, timeoutMs: number): Promise<ToolError> {
  await cdp(tabId, "Page.stopLoading", {}, 2_000).catch(() => undefined);
  return toolError("timeout", `the page did not start loading within ${timeoutMs} ms; its loading was stopped`, LOAD_HINT);
}

// One deadline for the whole navigation: the browser's Page.navigate answers only once the server
// answers, so its start and its load share the agent's timeoutMs.
async function navigateTab(tabId: number, url: string, ctx: ToolContext, timeoutMs: number, until: number) {
  // SECURITY I-84: on the agent's own tab the console and network are kept from this load on.
  // The document the tab shows now is read meanwhile: neither waits for the other.
  const [, from] = await Promise.all([captureLoad(tabId, url, ctx), topDocument(tabId)]);
  const w = watchNav(tabId, { toPage: toPage(url), ...(from ? { from } : {}) });
  try {
    // guarded: a beforeunload dialog holds the navigation; report it instead of hanging.
    const ms = left(until);
    let r: { errorText?: string; loaderId?: string };
    try {
      r = await guarded(tabId, "navigate", cdp<{ errorText?: string; loaderId?: string }>(tabId, "Page.navigate", { url }, ms, ctx.signal), { signal: ctx.signal, ms });
    } catch (e) {
      if (e instanceof ToolError && e.code === "timeout" && !ctx.signal.aborted && !w.committed()) throw await notStarted(tabId, timeoutMs);
      throw e;
    }
    if (r.errorText && r.errorText !== "net::ERR_ABORTED") {
      throw toolError("navigation_failed", `${url}: ${r.errorText}`, "Check the URL; the site may be down or unreachable.");
    }
    if (!r.loaderId) return { loaded: true, sameDocument: true };
    return await loaded(tabId, w, until, timeoutMs, ctx);
  } finally {
    w.stop();
  }
}

/** awaitLoad within the navigation's deadline; one that did not start in time is stopped. */
async function loaded(tabId: number, w: NavWatch, until: number, timeoutMs: number, ctx: ToolContext) {
  try {
    return await awaitLoad(w, left(until), ctx.signal);
  } catch (e) {
    if (e instanceof ToolError && e.code === "timeout" && !ctx.signal.aborted && !w.committed()) throw await notStarted(tabId, timeoutMs);
    throw e;
  }
}

async function summary(tabId: number, extra: Record<string, unknown>) {
  // SECURITY I-15/I-42: the landing page (after redirects) is judged, and its title and URL are
  // told, from one view of the tab; act() takes this judgement as its own landing check unless a
  // top frame had an event since.
  const t = await judgeLanding(tabId);
  const loaded = extra.loaded !== false;
  return {
    text: `tab ${tabId}: ${t.title || "(untitled)"} — ${t.url}${loaded ? "" : " (still loading)"}`,
    data: { url: t.url, title: t.title, ...extra },
    landed: t,
  };
}

export const navigate = defineTool<ActionArgs & { url: string; newTab?: boolean; background?: boolean; timeoutMs?: number }>({
  name: "navigate",
  description: "Open a URL in your current tab, tabId or a new tab; waits for load.",
  inputSchema: {
    type: "object",
    properties: {
      url: { type: "string", minLength: 1 },
      tabId: { type: "integer", minimum: 0, doc: "Omit for your current tab" },
      newTab: { type: "boolean", doc: "Open another tab (not with tabId)" },
      background: { type: "boolean", doc: "New tab not focused" },
      timeoutMs: S.timeoutMs(MAX_ARG_TIMEOUT_MS),
      ...ACTION_PROPS,
    },
    required: ["url"],
  },
  traits: { target: "tab-or-new", reads: "page", effects: ["navigation"], switch: "act", dialog: "blocked", handoff: "refused", destination: (a) => checkUrl(String(a.url ?? "")) },
  timeoutMs: MAX_TOOL_TIMEOUT_MS,
  async handler(a, ctx) {
    const url = checkUrl(a.url);
    const timeoutMs = a.timeoutMs ?? LOAD_MS;
    // From the handler's start: opening a tab takes from the same timeoutMs.
    const until = loadUntil(ctx, timeoutMs);
    let tabId: number;
    // SECURITY I-87: the gate named the session's current tab as tabId when it has a usable one
    // (ownership/check.ts currentTab) and newTab was not asked for; otherwise a new tab opens here.
    if (a.tabId === undefined && ownershipOn()) {
      // SECURITY I-24: the session's new tab, in its own unfocused window, owned from birth;
      // it starts blank and is navigated like any other tab.
      tabId = await openAgentTab(ctx.gate?.owner, ctx.signal);
      const id = tabId;
      return act(id, a, ctx, async () => {
        const r = await navigateTab(id, url, ctx, timeoutMs, until).catch((e: unknown) => {
          // The new tab's own about:blank navigation can still be pending when ours starts, and its
          // commit then aborts ours (a loaded machine): nothing of ours loaded, so it is sent again.
          if (e instanceof ToolError && e.code === "navigation_failed" && e.message.includes("net::ERR_ABORTED")) {
            return navigateTab(id, url, ctx, timeoutMs, until);
          }
          throw e;
        });
        return summary(id, { created: true, ...(r.loaded ? {} : { loaded: false }) });
      });
    } else if (a.tabId === undefined) {
      // A new tab loads the URL itself; its events are buffered until its id is known.
      const w = watchNav(undefined, { toPage: toPage(url) });
      let t: chrome.tabs.Tab;
      try {
        t = await withDeadline(chrome.tabs.create({ url, active: a.background !== true }), left(until, 10_000), "tabs.create", ctx.signal);
        if (t.id === undefined) throw toolError("internal", "tabs.create gave no tab id");
        w.bind(t.id);
      } catch (e) {
        w.stop();
        throw e;
      }
      const id = t.id;
      return act(id, a, ctx, async () => {
        const r = await loaded(id, w, until, timeoutMs, ctx);
        return summary(id, { created: true, ...(r.loaded ? {} : { loaded: false }) });
      });
    } else {
      tabId = await callTab(a.tabId, ctx);
    }
    return act(tabId, a, ctx, async () => {
      const r = await navigateTab(tabId, url, ctx, timeoutMs, until);
      return summary(tabId, r.loaded ? {} : { loaded: false });
    });
  },
});

export const history = defineTool<ActionArgs & { direction: "back" | "forward"; steps?: number; timeoutMs?: number }>({
  name: "history",
  description: "Go back or forward.",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      direction: { type: "string", enum: ["back", "forward"] },
      steps: { type: "integer", minimum: 1, maximum: 50 },
      timeoutMs: S.timeoutMs(MAX_ARG_TIMEOUT_MS),
      ...ACTION_PROPS,
    },
    required: ["direction"],
  },
  traits: { target: "tab", reads: "page", effects: ["navigation"], switch: "act", dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    const tabId = await callTab(a.tabId, ctx);
    return act(tabId, a, ctx, async () => {
      const h = await cdp<{ currentIndex: number; entries: { id: number; url: string }[] }>(tabId, "Page.getNavigationHistory", {}, left(ctx.deadline, 10_000), ctx.signal);
      const steps = a.steps ?? 1;
      const target = h.currentIndex + (a.direction === "back" ? -steps : steps);
      const entry = h.entries[target];
      if (!entry) throw toolError("invalid_argument", `steps: cannot go ${a.direction} ${steps} (history has ${h.entries.length} entries, at ${h.currentIndex + 1})`);
      const toBlank = BLANK_URL.test(entry.url);
      // SECURITY I-15: the history entry's URL is checked before going.
      await assertUrlAllowed(entry.url, toBlank ? "the history entry (about:blank, a blank page)" : "the history entry's page");
      await captureLoad(tabId, entry.url, ctx);
      const until = loadUntil(ctx, a.timeoutMs ?? LOAD_MS);
      const from = await topDocument(tabId);
      const w = watchNav(tabId, from ? { from } : {});
      let r: { loaded: boolean };
      try {
        const ms = left(until, 10_000);
        await guarded(tabId, "history", cdp(tabId, "Page.navigateToHistoryEntry", { entryId: entry.id }, ms, ctx.signal), { signal: ctx.signal, ms });
        r = await loaded(tabId, w, until, a.timeoutMs ?? LOAD_MS, ctx);
      } finally {
        w.stop();
      }
      if (toBlank) {
        const events = topFrameEvents();
        const t = await resolveTab(tabId);
        // A blank page has no origin to judge and nothing to read: say what was reached rather
        // than origin_not_allowed. Reads of it stay refused (SECURITY I-40).
        if (await isOpaqueBlank(t)) {
          return { text: `tab ${tabId}: ${a.direction} to about:blank (blank page)`, data: { url: "about:blank", title: "", blank: true }, landed: { url: "about:blank", title: "", events } };
        }
      }
      return summary(tabId, r.loaded ? {} : { loaded: false });
    });
  },
});

export const reload = defineTool<ActionArgs & { bypassCache?: boolean; timeoutMs?: number }>({
  name: "reload",
  description: "Reload the tab.",
  inputSchema: {
    type: "object",
    properties: { tabId: S.tabId, bypassCache: { type: "boolean" }, timeoutMs: S.timeoutMs(MAX_ARG_TIMEOUT_MS), ...ACTION_PROPS },
  },
  traits: { target: "tab", reads: "page", effects: ["navigation"], switch: "act", dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    const tabId = await callTab(a.tabId, ctx);
    return act(tabId, a, ctx, async () => {
      await captureReload(tabId, ctx);
      const until = loadUntil(ctx, a.timeoutMs ?? LOAD_MS);
      const from = await topDocument(tabId);
      const w = watchNav(tabId, from ? { from } : {});
      let r: { loaded: boolean };
      try {
        const ms = left(until, 10_000);
        await guarded(tabId, "reload", cdp(tabId, "Page.reload", { ignoreCache: a.bypassCache === true }, ms, ctx.signal), { signal: ctx.signal, ms });
        r = await loaded(tabId, w, until, a.timeoutMs ?? LOAD_MS, ctx);
      } finally {
        w.stop();
      }
      return summary(tabId, r.loaded ? {} : { loaded: false });
    });
  },
});

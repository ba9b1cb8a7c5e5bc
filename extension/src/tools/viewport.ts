// set_viewport: emulates a device on one tab (cdp/emulation.ts) — a preset or an explicit size,
// device scale, mobile, touch, orientation — or resets it; the person's window is never resized.
// The answer is what the page itself sees after the change (innerWidth, innerHeight,
// devicePixelRatio, measured in its isolated world), not what was asked for.

import { left, withDeadline } from "../cdp/deadline.js";
import { clearEmulation, emulate, emulationOf, type Emulation } from "../cdp/emulation.js";
import { defineTool } from "./define.js";
import { toolError } from "./errors.js";
import { checkNoDialog, resolveTab } from "./browser.js";
import { S } from "./common.js";
import { docAllowed } from "./origin.js";
import { getPolicy } from "./safety.js";

/** Device presets: CSS size in portrait for phones and tablets, their usual scale, mobile and touch. */
export const PRESETS = {
  "mobile-small": { width: 375, height: 667, deviceScaleFactor: 2, mobile: true },
  mobile: { width: 393, height: 852, deviceScaleFactor: 3, mobile: true },
  tablet: { width: 820, height: 1180, deviceScaleFactor: 2, mobile: true },
  desktop: { width: 1280, height: 800, deviceScaleFactor: 1, mobile: false },
  "desktop-wide": { width: 1920, height: 1080, deviceScaleFactor: 1, mobile: false },
} as const;
type Preset = keyof typeof PRESETS;

export interface ViewportArgs {
  tabId?: number;
  preset?: Preset;
  width?: number;
  height?: number;
  deviceScaleFactor?: number;
  mobile?: boolean;
  touch?: boolean;
  orientation?: "portrait" | "landscape";
  reset?: boolean;
}

/** The emulation the arguments ask for, or "reset"; invalid_argument naming the field otherwise. */
export function resolveViewport(a: ViewportArgs): Emulation | "reset" {
  const bad = (field: string, msg: string): never => {
    throw toolError("invalid_argument", `${field}: ${msg}`, "Give a preset, or width and height, or reset: true.", { field });
  };
  const sized = a.width !== undefined || a.height !== undefined;
  if (a.reset === true) {
    const extra = (["preset", "width", "height", "deviceScaleFactor", "mobile", "touch", "orientation"] as const).find((k) => a[k] !== undefined);
    if (extra) bad(extra, "reset takes no other setting");
    return "reset";
  }
  if (a.preset !== undefined && sized) bad(a.width !== undefined ? "width" : "height", "give a preset or an explicit size, not both");
  let width: number;
  let height: number;
  let scale: number;
  let mobile: boolean;
  if (a.preset !== undefined) {
    const p = PRESETS[a.preset];
    if (!p) bad("preset", `unknown preset; one of ${Object.keys(PRESETS).join(", ")}`);
    ({ width, height, deviceScaleFactor: scale, mobile } = p);
  } else {
    if (a.width === undefined || a.height === undefined) bad(a.width === undefined ? "width" : "height", sized ? "give width and height together" : "give a preset, width and height, or reset");
    width = a.width as number;
    height = a.height as number;
    scale = 1;
    mobile = false;
  }
  if (a.deviceScaleFactor !== undefined) scale = a.deviceScaleFactor;
  if (a.mobile !== undefined) mobile = a.mobile;
  // Presets are portrait (phones, tablets) or landscape (desktops); an orientation turns them.
  const natural = width >= height ? "landscape" : "portrait";
  const orientation = a.orientation ?? natural;
  if (orientation !== natural) [width, height] = [height, width];
  return { width, height, deviceScaleFactor: scale, mobile, touch: a.touch ?? mobile, orientation, ...(a.preset ? { preset: a.preset } : {}) };
}

interface Seen {
  origin: string;
  url: string;
  innerWidth: number;
  innerHeight: number;
  devicePixelRatio: number;
  screenWidth: number;
  screenHeight: number;
  orientation: string;
  maxTouchPoints: number;
  settled: boolean;
}

// Runs in the top document's isolated world (self-contained, out of the page's reach): waits, bounded,
// until the page has taken the change (its screen is the emulated one, or no longer the old one),
// then reports what it sees.
async function measure(p: { want?: { w: number; h: number; dpr: number; layout: boolean }; was?: { w: number; dpr: number }; ms: number }): Promise<Seen> {
  const t0 = Date.now();
  for (;;) {
    const m = {
      innerWidth: window.innerWidth,
      innerHeight: window.innerHeight,
      devicePixelRatio: window.devicePixelRatio,
      screenWidth: screen.width,
      screenHeight: screen.height,
      orientation: screen.orientation?.type ?? "",
      maxTouchPoints: navigator.maxTouchPoints,
    };
    const w = p.want;
    const settled = w
      ? m.screenWidth === w.w && m.screenHeight === w.h && Math.abs(m.devicePixelRatio - w.dpr) < 1e-3 && (!w.layout || (m.innerWidth === w.w && m.innerHeight === w.h))
      : p.was
        ? m.screenWidth !== p.was.w || Math.abs(m.devicePixelRatio - p.was.dpr) >= 1e-3
        : true;
    if (settled || Date.now() - t0 > p.ms) return { ...m, origin: self.origin, url: location.href, settled };
    await new Promise((r) => setTimeout(r, 16));
  }
}

const SIZE = { type: "integer", minimum: 120, maximum: 4096, doc: "CSS px" } as const;

export const setViewport = defineTool<ViewportArgs>({
  name: "set_viewport",
  group: "emulation",
  description: "Emulate a device (preset or size) on the tab, or reset; says what the page sees.",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      preset: { type: "string", enum: Object.keys(PRESETS), doc: "375×667, 393×852, 820×1180, 1280×800, 1920×1080" },
      width: SIZE,
      height: SIZE,
      deviceScaleFactor: { type: "number", minimum: 0.5, maximum: 3 },
      mobile: { type: "boolean" },
      touch: { type: "boolean", doc: "Default: as mobile" },
      orientation: { type: "string", enum: ["portrait", "landscape"] },
      reset: { type: "boolean", doc: "Back to the window's own viewport" },
    },
  },
  traits: { target: "tab", reads: "page", effects: ["emulate"], switch: "act", dialog: "blocked", handoff: "refused" },
  // The same settings twice leave the page as the first call did.
  idempotent: true,
  async handler(a, ctx) {
    const want = resolveViewport(a);
    const tabId = (await resolveTab(a.tabId)).id as number;
    checkNoDialog(tabId);
    const ms = left(ctx.deadline, 10_000);
    const before = emulationOf(tabId);
    if (want === "reset") await clearEmulation(tabId, ms, ctx.signal);
    else await emulate(tabId, want, ms, ctx.signal);
    const probe =
      want === "reset"
        ? { ...(before ? { was: { w: before.width, dpr: before.deviceScaleFactor } } : {}), ms: 2_000 }
        : { want: { w: want.width, h: want.height, dpr: want.deviceScaleFactor, layout: !want.mobile }, ms: 2_000 };
    const res = await withDeadline(
      chrome.scripting.executeScript({ target: { tabId, frameIds: [0] }, world: "ISOLATED", func: measure, args: [probe] }),
      left(ctx.deadline, 5_000),
      "viewport measure",
      ctx.signal,
    ).catch(() => null);
    const seen = res?.[0]?.result as Seen | undefined;
    const set = want === "reset" ? "reset to the window's own viewport" : describe(want);
    if (!seen) throw toolError("navigation_failed", `the viewport was ${want === "reset" ? "reset" : "set"}, but the page did not answer; nothing was read`, "Take a snapshot, or call set_viewport again to measure.");
    // SECURITY I-15: what the page sees is read only from a document on the list.
    if (!docAllowed(await getPolicy(), seen.origin, seen.url)) {
      throw toolError("origin_not_allowed", `the viewport was ${want === "reset" ? "reset" : "set"}, but the page is not on the person's allowlist; nothing was read from it`);
    }
    const page = {
      innerWidth: seen.innerWidth,
      innerHeight: seen.innerHeight,
      devicePixelRatio: seen.devicePixelRatio,
      screen: { width: seen.screenWidth, height: seen.screenHeight },
      orientation: seen.orientation,
      touch: seen.maxTouchPoints > 0,
    };
    const note = seen.settled ? "" : "\n(the page had not taken the whole change within 2 s; these are its values now)";
    return {
      text: `tab ${tabId}: ${set}\nthe page sees innerWidth ${page.innerWidth}, innerHeight ${page.innerHeight}, devicePixelRatio ${page.devicePixelRatio}, ${page.orientation || "no orientation"}${page.touch ? ", touch" : ""}${note}`,
      data: { tabId, emulation: want === "reset" ? null : want, page, ...(seen.settled ? {} : { settled: false }) },
      whole: true,
    };
  },
});

function describe(e: Emulation): string {
  const flags = [e.mobile ? "mobile" : "", e.touch ? "touch" : "", e.orientation].filter(Boolean).join(", ");
  return `emulating ${e.width}×${e.height} @${e.deviceScaleFactor}x, ${flags}${e.preset ? ` (preset ${e.preset})` : ""}`;
}

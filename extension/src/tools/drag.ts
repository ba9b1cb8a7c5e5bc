// drag: press at one ref or point, move in steps, release at another, with trusted input through
// chrome.debugger. A page that starts an HTML5 drag (a dragstart nobody cancelled) gets Chrome's
// drag events (Input.setInterceptDrags, then dragEnter / dragOver / drop with the intercepted
// drag data); any other page sees the mouse and pointer events of a press, moves and a release,
// so pointer-based sortable lists work too. It is a write tool with the `click` effect and goes
// through the gates a mouse_click goes through: act mode, ownership, the effect guard armed for
// the call (act), every point of the path checked before the first event (SECURITY I-36, I-71).

import { cdp, onCdpEvent } from "../cdp/debugger.js";
import { left, withDeadline } from "../cdp/deadline.js";
import { defineTool, type ToolContext } from "./define.js";
import { toolError } from "./errors.js";
import { callTab, type Target } from "./browser.js";
import { act, ACTION_PROPS, S, type ActionArgs } from "./common.js";
import { checkNotBlocked, checkPoint } from "./effects.js";
import { input, navigationStop, pointOf } from "./input.js";
import type { JsonSchema } from "./schema.js";

/** One end of a drag: an element (ref or selector) or a point in the tab's viewport (CSS pixels). */
export interface End {
  ref?: string;
  selector?: string;
  x?: number;
  y?: number;
}

/** tools/list publishes a bare object: the description names the fields once for both ends. */
const END_SCHEMA: JsonSchema = {
  type: "object",
  properties: { ref: S.ref, selector: S.selector, x: { type: "number" }, y: { type: "number" } },
  additionalProperties: false,
  wire: { type: "object", properties: {} },
};

/** Moves of at most ~20 px, 5 to 40 of them: enough for a sortable list to follow, and a drag threshold to pass. */
export function stepsFor(a: { x: number; y: number }, b: { x: number; y: number }): number {
  return Math.min(40, Math.max(5, Math.ceil(Math.hypot(b.x - a.x, b.y - a.y) / 20)));
}
const DRAG_DATA_MS = 2_000;

/** An end is a ref, a selector or both coordinates, exactly one of them; invalid_argument naming the field otherwise. */
export function checkEnd(e: End, field: "from" | "to"): void {
  const el = (e.ref !== undefined ? 1 : 0) + (e.selector !== undefined ? 1 : 0);
  const pt = e.x !== undefined || e.y !== undefined;
  if (el + (pt ? 1 : 0) !== 1 || (pt && (e.x === undefined || e.y === undefined))) {
    throw toolError("invalid_argument", `${field}: give a ref, a selector, or both x and y`, "e.g. {\"ref\":\"b12\"} or {\"x\":100,\"y\":200}", { field });
  }
}

/** The points a drag passes from `a` to `b`, the end included, the start not. */
export function pathPoints(a: { x: number; y: number }, b: { x: number; y: number }, steps: number): { x: number; y: number }[] {
  const out: { x: number; y: number }[] = [];
  for (let i = 1; i <= steps; i++) out.push({ x: a.x + ((b.x - a.x) * i) / steps, y: a.y + ((b.y - a.y) * i) / steps });
  return out;
}

type Pt = { x: number; y: number };

async function viewport(tabId: number, ctx: ToolContext): Promise<{ w: number; h: number }> {
  // The browser's view, not the page's (a page can redefine innerWidth in its own world).
  const m = await cdp<{ cssLayoutViewport?: { clientWidth: number; clientHeight: number } }>(tabId, "Page.getLayoutMetrics", {}, left(ctx.deadline, 5_000), ctx.signal);
  const v = m.cssLayoutViewport;
  if (!v) throw toolError("internal", "drag: the browser did not report the viewport");
  return { w: v.clientWidth, h: v.clientHeight };
}

/** Where the drag starts and ends, both in view at once; not_visible / invalid_argument otherwise. */
async function ends(tabId: number, from: End, to: End, ctx: ToolContext): Promise<{ a: Pt; b: Pt }> {
  const el = (e: End): boolean => e.ref !== undefined || e.selector !== undefined;
  const at = async (e: End, covered: boolean) => (el(e) ? pointOf(tabId, e as Target, ctx, covered) : { x: e.x as number, y: e.y as number, p: undefined });
  let a = await at(from, false);
  const b = await at(to, true);
  // Bringing the end into view may have scrolled the start away: look again; it must still be there.
  if (b.p?.scrolled && el(from)) {
    a = await at(from, false);
    if (a.p?.scrolled) throw toolError("not_visible", "the start and the end of the drag cannot be in view at once; nothing was sent", "Drag in shorter hops, or scroll so both are visible.");
  }
  const vp = await viewport(tabId, ctx);
  const inView = (p: Pt) => p.x >= 0 && p.y >= 0 && p.x < vp.w && p.y < vp.h;
  for (const [field, p, e] of [["from", a, from], ["to", b, to]] as const) {
    if (inView(p)) continue;
    if (el(e)) throw toolError("not_visible", `${field}: ${e.ref ?? e.selector} is outside the viewport; nothing was sent`, undefined, { field });
    throw toolError("invalid_argument", `${field}: ${Math.round(p.x)},${Math.round(p.y)} is off-screen (the viewport is ${vp.w}×${vp.h}); nothing was sent`, "Give a point inside the viewport, or a ref.", { field });
  }
  return { a: { x: a.x, y: a.y }, b: { x: b.x, y: b.y } };
}

// These run in the page's isolated world (self-contained): a note of whether a drag began, so the
// worker knows to wait for Chrome's intercepted drag data (and never waits when none began).
function watchDragStart(): void {
  const w = globalThis as { __toriiDrag?: { started: boolean; cancelled: boolean; off(): void } };
  w.__toriiDrag?.off();
  const st = { started: false, cancelled: false, off: () => window.removeEventListener("dragstart", on, true) };
  const on = (e: Event) => {
    st.started = true;
    // After the page's own listeners, which may cancel it.
    setTimeout(() => {
      st.cancelled = e.defaultPrevented;
    }, 0);
  };
  window.addEventListener("dragstart", on, true);
  w.__toriiDrag = st;
}
function dragBegan(stop: boolean): boolean {
  const w = globalThis as { __toriiDrag?: { started: boolean; cancelled: boolean; off(): void } };
  const st = w.__toriiDrag;
  if (!st) return false;
  if (stop) {
    st.off();
    delete w.__toriiDrag;
  }
  return st.started && !st.cancelled;
}

async function inFrames<R>(tabId: number, func: (a: boolean) => R, arg: boolean): Promise<R[]> {
  const res = await withDeadline(chrome.scripting.executeScript({ target: { tabId, allFrames: true }, world: "ISOLATED", func: func as never, args: [arg] as never }), 5_000, "drag probe").catch(() => []);
  return res.map((r) => r.result as R);
}

/** Runs the press, the moves and the release (or Chrome's drag events); leaves no button held. */
async function perform(tabId: number, a: Pt, b: Pt, ctx: ToolContext): Promise<{ html5: boolean }> {
  // SECURITY I-36: every point the pointer passes is judged before the first event goes out
  // (frames of another origin along the way would see moves and drag events); a frame put there
  // later is the guard's, and the end point is checked again once the drag is done.
  const path = pathPoints(a, b, stepsFor(a, b));
  await checkPoint(tabId, a.x, a.y);
  for (const p of path) await checkPoint(tabId, p.x, p.y);

  let data: unknown;
  let pressed = false;
  let at: Pt = a;
  const intercepted: { data?: unknown; wake?: () => void } = {};
  const off = onCdpEvent((t, method, params) => {
    if (t !== tabId || method !== "Input.dragIntercepted") return;
    intercepted.data = params.data;
    intercepted.wake?.();
  });
  const nav = navigationStop(tabId);
  let intercepting = false;
  try {
    await inFrames(tabId, watchDragStart as (a: boolean) => void, false);
    await cdp(tabId, "Input.setInterceptDrags", { enabled: true }, left(ctx.deadline, 5_000), ctx.signal);
    intercepting = true;
    await input(tabId, "Input.dispatchMouseEvent", { type: "mouseMoved", x: a.x, y: a.y, buttons: 0 }, ctx);
    await input(tabId, "Input.dispatchMouseEvent", { type: "mousePressed", x: a.x, y: a.y, button: "left", buttons: 1, clickCount: 1 }, ctx);
    pressed = true;
    for (const p of path) {
      nav.check("drag");
      // A frame's guard blocked an event (a frame off the list moved under the pointer): stop.
      checkNotBlocked(tabId);
      at = p;
      if (data !== undefined) {
        await input(tabId, "Input.dispatchDragEvent", { type: "dragOver", x: p.x, y: p.y, data }, ctx);
        continue;
      }
      await input(tabId, "Input.dispatchMouseEvent", { type: "mouseMoved", x: p.x, y: p.y, button: "left", buttons: 1 }, ctx);
      if ((await inFrames(tabId, dragBegan, false)).some(Boolean)) {
        data = await dragData(intercepted, ctx);
        await input(tabId, "Input.dispatchDragEvent", { type: "dragEnter", x: p.x, y: p.y, data }, ctx);
        await input(tabId, "Input.dispatchDragEvent", { type: "dragOver", x: p.x, y: p.y, data }, ctx);
      }
    }
    nav.check("drag");
    checkNotBlocked(tabId);
    if (data !== undefined) await input(tabId, "Input.dispatchDragEvent", { type: "drop", x: b.x, y: b.y, data }, ctx);
    else await input(tabId, "Input.dispatchMouseEvent", { type: "mouseReleased", x: b.x, y: b.y, button: "left", buttons: 0, clickCount: 1 }, ctx);
    pressed = false;
    await checkPoint(tabId, b.x, b.y, true);
    return { html5: data !== undefined };
  } finally {
    off();
    nav.off();
    // A drag that stopped half-way lets go where it is, so the page is not left with a button held.
    if (pressed) {
      const ev = data !== undefined ? ["Input.dispatchDragEvent", { type: "dragCancel", x: at.x, y: at.y, data }] : ["Input.dispatchMouseEvent", { type: "mouseReleased", x: at.x, y: at.y, button: "left", buttons: 0, clickCount: 1 }];
      await cdp(tabId, ev[0] as string, ev[1] as Record<string, unknown>, 2_000).catch(() => undefined);
    }
    if (intercepting) await cdp(tabId, "Input.setInterceptDrags", { enabled: false }, 2_000).catch(() => undefined);
    await inFrames(tabId, dragBegan, true);
  }
}

/** Chrome's data of the drag the page began, which it reports right after the dragstart. */
function dragData(st: { data?: unknown; wake?: () => void }, ctx: ToolContext): Promise<unknown> {
  if (st.data !== undefined) return Promise.resolve(st.data);
  const got = new Promise<unknown>((resolve) => {
    st.wake = () => resolve(st.data);
  });
  return withDeadline(got, Math.min(DRAG_DATA_MS, left(ctx.deadline, DRAG_DATA_MS)), "the drag's data from the browser", ctx.signal);
}

export const drag = defineTool<ActionArgs & { tabId?: number; from: End; to: End }>({
  name: "drag",
  description: "Real mouse drag; from/to: {ref}, {selector} or {x,y}.",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      from: END_SCHEMA,
      to: END_SCHEMA,
      ...ACTION_PROPS,
    },
    required: ["from", "to"],
  },
  traits: { target: "tab", reads: "page", effects: ["click"], switch: "act", dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    checkEnd(a.from, "from");
    checkEnd(a.to, "to");
    const tabId = await callTab(a.tabId, ctx);
    return act(tabId, a, ctx, async () => {
      const { a: p, b: q } = await ends(tabId, a.from, a.to, ctx);
      const r = await perform(tabId, p, q, ctx);
      const name = (e: End, pt: Pt) => e.ref ?? e.selector ?? `${Math.round(pt.x)},${Math.round(pt.y)}`;
      return {
        text: `dragged ${name(a.from, p)} to ${name(a.to, q)}${r.html5 ? " (HTML5 drag-and-drop)" : ""}`,
        data: { from: p, to: q, html5: r.html5 },
      };
    });
  },
});

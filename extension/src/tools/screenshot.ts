// screenshot: CDP Page.captureScreenshot. JPEG by default (much smaller than PNG for agents),
// maxWidth through the clip scale, a region or an element, or the full page. No capture is larger
// than MAX_CAPTURE_PX on its long side (past it the browser's capture comes back empty): a larger
// one is scaled down to fit, but not below MIN_LEGIBLE_SCALE unless maxWidth asks for it; else it
// is refused naming the cap and what to do instead. An empty capture is never a success. A capture
// whose base64 would be too big for the link is refused with a hint rather than dropped on the
// way. Every capture is judged again after it is taken (SECURITY I-42).

import type { ElementState } from "../page/types.js";
import { cdp } from "../cdp/debugger.js";
import { emulationOf } from "../cdp/emulation.js";
import { left } from "../cdp/deadline.js";
import { defineTool, type ToolContext, type ToolOutput } from "./define.js";
import { toolError } from "./errors.js";
import { engine, frameOffset, resolveTab, resolveTarget } from "./browser.js";
import { S } from "./common.js";
import { watchCapture } from "./origin.js";
import { checkName, putFile } from "./files.js";
import { refuseUnmaskable } from "./secrets.js";

/** Base64 characters allowed in one result (the link caps frames at 8 MiB). */
const MAX_SCREENSHOT_B64 = 6 * 1024 * 1024;
/** The longest side of a capture, in image pixels: the browser's capture fails (empty) past it. */
export const MAX_CAPTURE_PX = 16_384;
/** Image pixels per CSS pixel below which text is no longer legible: the least a capture is scaled to on its own. */
export const MIN_LEGIBLE_SCALE = 0.5;

/**
 * The clip scale for a capture of `clip` CSS px at `dpr`: what maxWidth asks (1 when absent),
 * shrunk further to fit MAX_CAPTURE_PX on the long side. Throws screenshot_too_large when fitting
 * would take it below MIN_LEGIBLE_SCALE and maxWidth did not ask for that small an image.
 */
export function captureScale(clip: { width: number; height: number }, dpr: number, maxWidth?: number): number {
  const want = maxWidth ? Math.min(1, maxWidth / (clip.width * dpr)) : 1;
  const long = Math.max(clip.width, clip.height) * dpr;
  // Floored to whole pixels, so rounding never lands a pixel past the cap.
  const fit = Math.floor(MAX_CAPTURE_PX) / Math.ceil(long);
  if (want <= fit) return want;
  if (fit * dpr >= MIN_LEGIBLE_SCALE) return fit;
  const w = Math.round(clip.width * dpr);
  const h = Math.round(clip.height * dpr);
  const fitWidth = Math.max(1, Math.floor(clip.width * dpr * fit));
  throw toolError(
    "screenshot_too_large",
    `the capture would be ${w}x${h} px; a capture is capped at ${MAX_CAPTURE_PX} px on its long side, and fitting it would shrink it to ${(fit * dpr).toFixed(2)} px per CSS px, below the legible ${MIN_LEGIBLE_SCALE}; nothing was captured`,
    `Capture a region (region: {x, y, width, height} of at most ${Math.floor(MAX_CAPTURE_PX / dpr)} CSS px a side) or an element (ref), or print the page with print_to_pdf; or pass maxWidth ${fitWidth} or less to accept a small overview.`,
    { width: w, height: h, limit: MAX_CAPTURE_PX },
  );
}

/** The image type the first bytes of a base64 capture show, or undefined when it is neither (or empty). */
export function imageKind(b64: string): "png" | "jpeg" | undefined {
  let head = "";
  try {
    head = atob(b64.slice(0, 12));
  } catch {
    return undefined;
  }
  if (head.startsWith("\x89PNG")) return "png";
  if (head.startsWith("\xff\xd8\xff")) return "jpeg";
  return undefined;
}

interface Metrics {
  cssVisualViewport: { pageX: number; pageY: number; clientWidth: number; clientHeight: number };
  cssContentSize: { width: number; height: number };
  visualViewport?: { clientWidth: number };
}

interface Args {
  tabId?: number;
  format?: "jpeg" | "png";
  quality?: number;
  maxWidth?: number;
  fullPage?: boolean;
  ref?: string;
  selector?: string;
  region?: { x: number; y: number; width: number; height: number };
  saveAs?: string;
}

export const screenshot = defineTool<Args>({
  name: "screenshot",
  description: "Capture the viewport, fullPage, a region or an element; JPEG unless png.",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      format: { type: "string", enum: ["jpeg", "png"] },
      quality: { type: "integer", minimum: 1, maximum: 100, doc: "JPEG, default 70" },
      maxWidth: { type: "integer", minimum: 16, maximum: 8192, doc: "Downscale to this width (px)" },
      fullPage: { type: "boolean" },
      ref: S.ref,
      selector: S.selector,
      region: {
        type: "object",
        properties: {
          x: { type: "number" },
          y: { type: "number" },
          width: { type: "number", minimum: 1 },
          height: { type: "number", minimum: 1 },
        },
        required: ["x", "y", "width", "height"],
        additionalProperties: false,
        doc: "CSS px",
      },
      saveAs: { type: "string", minLength: 1, maxLength: 200, doc: "Keep as this file: a resource_link, no image" },
    },
  },
  traits: { target: "tab", reads: "pixels", effects: [], switch: "none", dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    const tabId = (await resolveTab(a.tabId)).id as number;
    // SECURITY I-77: pixels and PDF bytes cannot be checked for a secret the tab holds.
    await refuseUnmaskable(tabId, "a screenshot");
    const modes = [a.fullPage === true, a.region !== undefined, a.ref !== undefined || a.selector !== undefined].filter(Boolean).length;
    if (modes > 1) throw toolError("invalid_argument", "give at most one of fullPage, region, ref/selector");
    if (a.saveAs !== undefined) checkName(a.saveAs, "saveAs");
    const watch = await watchCapture(tabId);
    try {
      return await capture(tabId, a, ctx, watch);
    } finally {
      watch.stop();
    }
  },
});

async function capture(tabId: number, a: Args, ctx: ToolContext, watch: { check(): Promise<void>; interrupted: Promise<never> }): Promise<ToolOutput> {
  const ms = left(ctx.deadline, 20_000);
  const m = await Promise.race([cdp<Metrics>(tabId, "Page.getLayoutMetrics", {}, ms, ctx.signal), watch.interrupted]);
  const vv = m.cssVisualViewport;
  // Under device emulation the layout metrics report the emulated page at scale 1, but the capture
  // comes at the emulated scale: that scale is the one to size and downscale by.
  const em = emulationOf(tabId);
  const dpr = em ? em.deviceScaleFactor : m.visualViewport && vv.clientWidth > 0 ? m.visualViewport.clientWidth / vv.clientWidth : 1;
  let clip = { x: vv.pageX, y: vv.pageY, width: vv.clientWidth, height: vv.clientHeight };
  let beyond = false;
  if (a.fullPage) {
    clip = { x: 0, y: 0, width: m.cssContentSize.width, height: m.cssContentSize.height };
    beyond = true;
  } else if (a.region) {
    clip = { x: vv.pageX + a.region.x, y: vv.pageY + a.region.y, width: a.region.width, height: a.region.height };
    beyond = true;
  } else if (a.ref !== undefined || a.selector !== undefined) {
    const r = await resolveTarget(tabId, a);
    const s = await engine<ElementState>(tabId, "getState", r.args, { signal: ctx.signal, deadline: ctx.deadline, frameId: r.frameId, ...(r.docId ? { docId: r.docId } : {}) });
    if (!s.value.exists) throw toolError("not_found", `${a.ref ?? a.selector} does not exist`);
    if (!s.value.visible || s.value.box.w <= 0 || s.value.box.h <= 0) throw toolError("not_visible", `${a.ref ?? a.selector} has no visible box`);
    const off = r.frameId === 0 ? { x: 0, y: 0 } : await frameOffset(tabId, r.frameId, ctx.deadline, ctx.signal);
    const b = s.value.box;
    clip = { x: vv.pageX + off.x + b.x, y: vv.pageY + off.y + b.y, width: b.w, height: b.h };
    beyond = true;
  }
  if (clip.width < 1 || clip.height < 1) throw toolError("invalid_argument", "the capture area is empty");
  const scale = captureScale(clip, dpr, a.maxWidth);
  const format = a.format ?? "jpeg";
  const params: Record<string, unknown> = {
    format,
    clip: { ...clip, scale },
    captureBeyondViewport: beyond,
    fromSurface: true,
  };
  if (format === "jpeg") params.quality = a.quality ?? 70;
  let shot: { data: string };
  try {
    shot = await Promise.race([cdp<{ data: string }>(tabId, "Page.captureScreenshot", params, left(ctx.deadline, 30_000), ctx.signal), watch.interrupted]);
  } catch (e) {
    // A capture the browser gave up on because the page changed under it is that page's refusal.
    await watch.check();
    throw e;
  }
  await watch.check();
  const width = Math.round(clip.width * scale * dpr);
  const height = Math.round(clip.height * scale * dpr);
  // The browser answers a capture it could not make with an empty image, not an error.
  if (imageKind(shot.data ?? "") !== format) {
    throw toolError("screenshot_too_large", `the browser returned an empty or broken ${format} for a ${width}x${height} capture; nothing was saved`, `Capture a region or an element (ref), or set maxWidth for a smaller image; past ${MAX_CAPTURE_PX} px on a side the browser cannot capture.`, { width, height, limit: MAX_CAPTURE_PX });
  }
  if (shot.data.length > MAX_SCREENSHOT_B64 && a.saveAs === undefined) {
    throw toolError("screenshot_too_large", `the ${format} capture is ${(shot.data.length / 1048576).toFixed(1)} MiB base64 (limit 6 MiB in a result) at ${width}x${height}`, "Keep it as a file (saveAs), capture a region or an element (ref), set maxWidth, or use JPEG.", { width, height });
  }
  const mimeType = format === "png" ? "image/png" : "image/jpeg";
  if (a.saveAs !== undefined) {
    // SECURITY I-66: kept as a file; the pixels reach the agent only through resources/read.
    const link = await putFile(ctx, { name: a.saveAs, mimeType, data: shot.data, source: { tab: tabId, what: "a screenshot" } }, "Capture a region, an element (ref) or set maxWidth, or use JPEG.");
    return {
      text: `screenshot of tab ${tabId}: ${width}x${height} ${format}, saved as ${link.name} (${Math.round(link.size / 1024)} KiB) in the download sandbox: ${link.uri}`,
      data: { tabId, width, height, format, file: link },
      whole: true,
      resources: [link],
    };
  }
  return {
    text: `screenshot of tab ${tabId}: ${width}x${height} ${format}, ${Math.round((shot.data.length * 3) / 4 / 1024)} KiB`,
    data: { tabId, width, height, format, bytes: Math.round((shot.data.length * 3) / 4) },
    images: [{ data: shot.data, mimeType }],
  };
}

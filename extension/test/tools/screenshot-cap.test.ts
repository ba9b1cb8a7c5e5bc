// A capture stays within MAX_CAPTURE_PX on its long side: scaled down to fit while text stays
// legible, or refused naming the cap and what to do instead; an empty capture is never an image.
import { describe, expect, it } from "vitest";
import { captureScale, imageKind, MAX_CAPTURE_PX, MIN_LEGIBLE_SCALE } from "../../src/tools/screenshot.js";
import { ToolError } from "../../src/tools/errors.js";

const refusal = (f: () => unknown): ToolError => {
  try {
    f();
  } catch (e) {
    if (e instanceof ToolError) return e;
    throw e;
  }
  throw new Error("not refused");
};

describe("the capture cap", () => {
  it("a page within the cap is captured at full scale, or at maxWidth's", () => {
    expect(captureScale({ width: 1280, height: 16_000 }, 1)).toBe(1);
    expect(captureScale({ width: 1280, height: 720 }, 1, 640)).toBe(0.5);
  });

  it("a taller page is scaled to fit, never a pixel past the cap", () => {
    for (const [h, dpr] of [[20_000, 1], [30_000, 1], [12_000, 2], [16_385, 1]] as const) {
      const s = captureScale({ width: 1280, height: h }, dpr);
      expect(Math.round(h * s * dpr)).toBeLessThanOrEqual(MAX_CAPTURE_PX);
      expect(s * dpr).toBeGreaterThanOrEqual(MIN_LEGIBLE_SCALE);
    }
  });

  it("past the legible scale it is screenshot_too_large naming the cap and the next step", () => {
    const e = refusal(() => captureScale({ width: 1280, height: 73_933 }, 1));
    expect(e.code).toBe("screenshot_too_large");
    expect(e.message).toContain(String(MAX_CAPTURE_PX));
    expect(e.message).toContain("1280x73933");
    expect(e.hint).toMatch(/region/);
    expect(e.hint).toMatch(/print_to_pdf/);
    const w = Number(/maxWidth (\d+)/.exec(e.hint)?.[1]);
    expect(w).toBeGreaterThan(0);
    // The maxWidth it names is accepted, and fits.
    const s = captureScale({ width: 1280, height: 73_933 }, 1, w);
    expect(Math.round(73_933 * s)).toBeLessThanOrEqual(MAX_CAPTURE_PX);
    // A wide region too.
    expect(refusal(() => captureScale({ width: 40_000, height: 500 }, 1)).code).toBe("screenshot_too_large");
  });

  it("an empty or broken capture is no image", () => {
    expect(imageKind("")).toBeUndefined();
    expect(imageKind("AAAA")).toBeUndefined();
    expect(imageKind(btoa("\x89PNG\r\n\x1a\n...."))).toBe("png");
    expect(imageKind(btoa("\xff\xd8\xff\xe0...."))).toBe("jpeg");
    expect(imageKind("not base64!")).toBeUndefined();
  });
});

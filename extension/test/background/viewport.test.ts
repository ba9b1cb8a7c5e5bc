// The agent tabs' viewport a managed launch asks for (`torii launch --window-size W,H`): the connect
// page's fragment and message take only W×H within the bounds the CLI checks, the worker keeps it
// only from the first managed connect of a run, and an agent window is sized so that its page area
// is exactly that, whatever its toolbars take.
import { beforeEach, describe, expect, it, vi } from "vitest";
import { fitAgentWindow, isViewport, parseViewport } from "../../src/background/viewport.js";
import { parseLaunchHash } from "../../src/connect/hash.js";
import { parseRequest, type LinkState } from "../../src/shared/messages.js";

describe("parsing", () => {
  it("takes WxH within 200..7680 × 200..4320 and nothing else", () => {
    expect(parseViewport("1280x720")).toEqual({ width: 1280, height: 720 });
    expect(parseViewport("200x200")).toEqual({ width: 200, height: 200 });
    expect(parseViewport("7680x4320")).toEqual({ width: 7680, height: 4320 });
    for (const bad of [null, "", "1280,720", "199x720", "1280x4321", "7681x720", "-1x720", "1280x720x2", "1280.5x720", " 1280x720"]) expect(parseViewport(bad), String(bad)).toBeUndefined();
    expect(isViewport({ width: 1280, height: 720.5 })).toBe(false);
  });

  it("the connect fragment and message carry it, or drop a bad one", () => {
    expect(parseLaunchHash("#daemon=x&headless=1&otp=s&viewport=1600x900")).toEqual({ daemonUrl: "x", otp: "s", headless: true, viewport: { width: 1600, height: 900 } });
    expect(parseLaunchHash("#daemon=x&otp=s&viewport=99x99")).toEqual({ daemonUrl: "x", otp: "s" });
    expect(parseRequest({ type: "torii.connect", daemonUrl: "ws://a", otp: "s", viewport: { width: 1280, height: 720 } })).toEqual({ type: "torii.connect", daemonUrl: "ws://a", otp: "s", viewport: { width: 1280, height: 720 } });
    expect(parseRequest({ type: "torii.connect", daemonUrl: "ws://a", otp: "s", viewport: { width: 1280, height: 99_999 } })).toBeNull();
    expect(parseRequest({ type: "torii.connect", daemonUrl: "ws://a", otp: "s", viewport: "1280x720" })).toBeNull();
  });
});

describe("the worker and the agent's window", () => {
  let local: Record<string, unknown>;
  let session: Record<string, unknown>;
  let installType = "development";
  /** The fake window: its outer size, and what its toolbars take (a bar may appear after a resize). */
  let win: { width: number; height: number };
  let chromeH: number[];
  const connected = { status: "connected" } as LinkState;

  async function worker() {
    vi.resetModules();
    vi.doMock("../../src/tools/safety.js", () => ({ applyLaunchPolicy: async () => undefined }));
    vi.stubGlobal("chrome", {
      storage: {
        local: { get: async (k: string) => (k in local ? { [k]: local[k] } : {}), set: async (o: Record<string, unknown>) => void Object.assign(local, o) },
        session: { get: async (k: string) => (k in session ? { [k]: structuredClone(session[k]) } : {}), set: async (o: Record<string, unknown>) => void Object.assign(session, structuredClone(o)) },
      },
      management: { getSelf: async () => ({ installType }) },
      windows: {
        get: async (id: number) => ({ id, width: win.width, height: win.height, tabs: [{ active: true, width: win.width, height: win.height - (chromeH[0] ?? 0) }] }),
        update: async (_id: number, b: { width: number; height: number }) => {
          win = { width: b.width, height: b.height };
          if (chromeH.length > 1) chromeH.shift();
        },
      },
    });
    const m = await import("../../src/background/managed.js");
    await m.noteBrowserRun();
    return m;
  }

  beforeEach(() => {
    local = {};
    session = {};
    installType = "development";
    win = { width: 1280, height: 720 };
    chromeH = [87];
  });

  it("a managed launch's viewport is kept; an agent window's page area is made exactly that", async () => {
    const m = await worker();
    await m.launchRequested({ headless: true, viewport: { width: 1600, height: 900 } });
    await m.linkChanged(connected);
    expect(session.torii_launch_viewport).toEqual({ width: 1600, height: 900 });
    await fitAgentWindow(7);
    expect(win).toEqual({ width: 1600, height: 987 });
    // A bar that appears with the first resize is corrected too.
    win = { width: 1280, height: 720 };
    chromeH = [87, 143];
    await fitAgentWindow(7);
    expect(win).toEqual({ width: 1600, height: 1043 });
  });

  it("none from a profile torii did not create, nor without one: windows keep the size Chromium gave them", async () => {
    installType = "normal";
    const m = await worker();
    await m.launchRequested({ viewport: { width: 1600, height: 900 } });
    await m.linkChanged(connected);
    expect(session.torii_launch_viewport).toBeUndefined();
    await fitAgentWindow(7);
    expect(win).toEqual({ width: 1280, height: 720 });
  });
});

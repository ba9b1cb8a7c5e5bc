// Whether anyone can answer an approval (SECURITY I-80): only a browser run `torii launch` started
// headless, with no Torii page open that lists approvals, is one where no one can.
import { beforeEach, describe, expect, it, vi } from "vitest";

let session: Record<string, unknown>;
let pages: string[];

async function load() {
  vi.resetModules();
  vi.stubGlobal("chrome", {
    storage: { session: { get: async (k: string) => (k in session ? { [k]: session[k] } : {}), set: async (o: Record<string, unknown>) => void Object.assign(session, o) } },
    runtime: {
      ContextType: { POPUP: "POPUP", TAB: "TAB" },
      getContexts: async () => pages.map((documentUrl) => ({ documentUrl })),
    },
  });
  return import("../../src/background/unattended.js");
}

describe("noOneCanAnswer", () => {
  beforeEach(() => {
    session = {};
    pages = [];
  });
  it("a browser not started headless by torii launch: someone may answer", async () => {
    const u = await load();
    expect(await u.noOneCanAnswer()).toBe(false);
  });
  it("headless with no Torii page open: no one", async () => {
    const u = await load();
    await u.markHeadlessRun();
    expect(await u.noOneCanAnswer()).toBe(true);
    pages = ["chrome-extension://x/sidepanel.html", "chrome-extension://x/connect.html", "not a url"];
    expect(await u.noOneCanAnswer()).toBe(true);
  });
  it("headless, but the popup or an approval window is open (driven remotely): asked as usual", async () => {
    const u = await load();
    await u.markHeadlessRun();
    pages = ["chrome-extension://x/popup.html"];
    expect(await u.noOneCanAnswer()).toBe(false);
    pages = ["chrome-extension://x/approval.html#id=1"];
    expect(await u.noOneCanAnswer()).toBe(false);
  });
});

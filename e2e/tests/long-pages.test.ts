// Long pages: a full-page screenshot of a 3,000- and a 20,000-row table is a real image within the
// 16,384 px cap or a typed error naming the cap and the next step, never an empty file; the PDF of
// the 3,000-row page reaches the sandbox whole (files over one request go in chunks: see
// files-sandbox.test.ts). The 20,000-row PDF runs with TORII_E2E_SLOW=1: the browser's own print
// layout of that table takes 34-44 s on a quiet two-core machine (44 s inside a full suite run), too near
// print_to_pdf's 50 s cap to be a reliable check on a shared machine.
import { expect, test } from "vitest";
import { imageSize } from "../src/image.ts";
import { describeBrowser } from "../src/harness.ts";
import { useToolsRig } from "../src/tools-rig.ts";

interface Link {
  uri: string;
  name: string;
  size: number;
}

const slow = process.env.TORII_E2E_SLOW === "1";

describeBrowser("long pages", () => {
  const rig = useToolsRig({ config: { broker: { toolGroups: ["pdf"] } } });

  async function readFile(uri: string): Promise<Buffer> {
    const r = await rig().mcp.client.readResource({ uri });
    const c = r.contents[0] as { blob?: string };
    return Buffer.from(c.blob ?? "", "base64");
  }

  test("full-page screenshots of long tables: an image within the cap, or screenshot_too_large naming it", async () => {
    const { mcp } = rig();
    const t = await rig().open("long-table.html?rows=3000");
    // Within the cap and the legible scale: a real image (a 600-row page is ~15,000 px tall).
    const short = await rig().open("long-table.html?rows=600");
    const ok = await mcp.call("screenshot", { tabId: short.tabId, fullPage: true, saveAs: "short.jpg" });
    expect(ok.isError, ok.text).toBe(false);
    const okLink = ok.data.file as Link;
    const okBytes = await readFile(okLink.uri);
    expect(okBytes.length).toBe(okLink.size);
    expect(okBytes.length).toBeGreaterThan(10_000);
    const okSize = imageSize(okBytes);
    expect(okSize.type).toBe("jpeg");
    expect(Math.max(okSize.width, okSize.height)).toBeLessThanOrEqual(16_384);
    expect(okSize.height).toBeGreaterThan(okSize.width);

    for (const [tab, rows] of [[t, 3000]] as const) {
      for (const args of [{ fullPage: true, saveAs: `full-${rows}.jpg` }, { fullPage: true }]) {
        const r = await mcp.call("screenshot", { tabId: tab.tabId, ...args });
        // Never a success with nothing in it.
        expect(r.isError, r.text).toBe(true);
        expect(r.error?.code).toBe("screenshot_too_large");
        expect(r.text).toContain("16384");
        expect(r.error?.hint).toMatch(/region/);
        expect(r.error?.hint).toMatch(/print_to_pdf/);
        expect(r.ms).toBeLessThan(10_000);
        // The maxWidth the hint names gives a real overview image within the cap.
        const w = Number(/maxWidth (\d+)/.exec(r.error?.hint ?? "")?.[1]);
        expect(w).toBeGreaterThan(0);
        if (args.saveAs) {
          const small = await mcp.call("screenshot", { tabId: tab.tabId, fullPage: true, maxWidth: w, saveAs: "overview.jpg" });
          expect(small.isError, small.text).toBe(false);
          const bytes = await readFile((small.data.file as Link).uri);
          const size = imageSize(bytes);
          expect(bytes.length).toBeGreaterThan(10_000);
          expect(size.height).toBeLessThanOrEqual(16_384);
          expect(size.height).toBeGreaterThan(10_000);
        }
      }
    }
    const long = await rig().open("long-table.html?rows=20000");
    const r = await mcp.call("screenshot", { tabId: long.tabId, fullPage: true });
    expect(r.error?.code, r.text).toBe("screenshot_too_large");
    expect(r.text).toContain("16384");
    // The viewport of the same page is an ordinary capture.
    const vp = await mcp.call("screenshot", { tabId: long.tabId });
    expect(vp.isError, vp.text).toBe(false);
    expect(vp.images[0]?.data.length ?? 0).toBeGreaterThan(1_000);
  });

  test("print_to_pdf of a 3,000-row table reaches the sandbox whole", async () => {
    const { mcp } = rig();
    const t = await rig().open("long-table.html?rows=3000");
    const r = await mcp.call("print_to_pdf", { tabId: t.tabId, name: "rows-3000.pdf" }, 58_000);
    expect(r.isError, r.text).toBe(false);
    const link = r.data.file as Link;
    const bytes = await readFile(link.uri);
    expect(bytes.length).toBe(link.size);
    expect(bytes.subarray(0, 5).toString("latin1")).toBe("%PDF-");
    expect(bytes.subarray(-1024).toString("latin1")).toContain("%%EOF");
    // Dozens of pages of table: well over a few hundred KiB.
    expect(bytes.length).toBeGreaterThan(200_000);
    console.log(`print_to_pdf 3,000 rows: ${bytes.length} bytes in ${Math.round(r.ms)} ms`);
  });

  test.runIf(slow)("print_to_pdf of a 20,000-row table (TORII_E2E_SLOW=1)", async () => {
    const { mcp } = rig();
    const t = await rig().open("long-table.html?rows=20000");
    const r = await mcp.call("print_to_pdf", { tabId: t.tabId, name: "rows-20000.pdf" }, 58_000);
    expect(r.isError, r.text).toBe(false);
    const link = r.data.file as Link;
    const bytes = await readFile(link.uri);
    expect(bytes.subarray(0, 5).toString("latin1")).toBe("%PDF-");
    expect(bytes.length).toBeGreaterThan(1_000_000);
    console.log(`print_to_pdf 20,000 rows: ${bytes.length} bytes in ${Math.round(r.ms)} ms`);
  }, 120_000);
});

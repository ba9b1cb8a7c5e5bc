// Files as MCP resources, in the download sandbox (SECURITY I-66), through the real path: the
// official MCP TS SDK client → `torii mcp` → the daemon → the extension in headless Chromium.
// print_to_pdf (on a background tab), save_to_file, a screenshot kept as a file and a download the
// person allowed each come back as a resource_link and are read back through resources/read; the
// bytes are on disk in the session's folder, never in the tool result. Bad input: names with path
// separators, a download named ../../.bashrc, a symlink into /etc, another session's file, a
// missing file; a PDF over the link's request cap arrives in chunks.
import { mkdir, readFile, readdir, stat, symlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { beforeAll, expect, test } from "vitest";
import { describeBrowser } from "../src/harness.ts";
import { Mcp } from "../src/mcp.ts";
import { useToolsRig } from "../src/tools-rig.ts";
import { pollUntil } from "../src/util.ts";

interface Link {
  type: "resource_link";
  uri: string;
  name: string;
  mimeType: string;
  size: number;
}

/** One tools/call, raw: the content blocks as the agent gets them. */
async function raw(m: Mcp, name: string, args: Record<string, unknown>) {
  const r = (await m.client.callTool({ name, arguments: args }, undefined, { timeout: 90_000 })) as {
    isError?: boolean;
    content: { type: string; text?: string }[];
    structuredContent?: { error?: { code: string; message: string; hint?: string } };
  };
  return { ...r, json: JSON.stringify(r), links: r.content.filter((c): c is Link & { type: string } => c.type === "resource_link") as Link[] };
}

async function saved(m: Mcp, name: string, args: Record<string, unknown>): Promise<Link> {
  const r = await raw(m, name, args);
  expect(r.isError, r.json.slice(0, 2000)).not.toBe(true);
  expect(r.links, r.json.slice(0, 2000)).toHaveLength(1);
  return r.links[0] as Link;
}

/** resources/read of one uri: the bytes (blob or text) and the type the daemon answered. */
async function read(m: Mcp, uri: string): Promise<{ bytes: Buffer; mimeType: string | undefined; text: string | undefined }> {
  const r = await m.client.readResource({ uri });
  const c = r.contents[0] as { uri: string; mimeType?: string; blob?: string; text?: string };
  expect(c.uri).toBe(uri);
  return { bytes: c.blob !== undefined ? Buffer.from(c.blob, "base64") : Buffer.from(c.text ?? "", "utf8"), mimeType: c.mimeType, text: c.text };
}

/** The error resources/read answers with (it must fail). */
async function readError(m: Mcp, uri: string): Promise<McpError> {
  try {
    await m.client.readResource({ uri });
  } catch (e) {
    if (e instanceof McpError) return e;
    throw e;
  }
  throw new Error(`resources/read ${uri} succeeded`);
}

const folderOf = (uri: string) => /^torii:\/\/files\/([^/]+)\//.exec(uri)?.[1] ?? "";

describeBrowser("files as resources, in the download sandbox", () => {
  const rig = useToolsRig({ config: { broker: { toolGroups: ["pdf"] } } }); // print_to_pdf is offered only when its group is on
  let dlDir = "";

  beforeAll(async () => {
    // The browser's download folder is in its profile (e2e/src/browser.ts), not the sandbox: a kept
    // download is moved from there.
    dlDir = rig().browser.downloadDir;
    // Playwright saves downloads under GUID names in a folder of its own: give them back to the browser.
    const b = rig().browser.context.browser();
    if (!b) throw new Error("no browser handle");
    const cdp = await b.newBrowserCDPSession();
    await cdp.send("Browser.setDownloadBehavior", { behavior: "default" });
    await cdp.detach();
  });

  test("print_to_pdf on a background tab, save_to_file and a screenshot file come back as resource_links and read back", async () => {
    const { mcp, torii } = rig();
    const a = await rig().open("files.html");
    const b = await rig().open("article.html");
    // The person opens another tab in A's window: A is a background tab now.
    const popup = await rig().browser.openPopup();
    type Tabs = { tabs: { get(id: number): Promise<{ windowId: number; active: boolean }>; create(p: object): Promise<unknown> } };
    await popup.evaluate(async (id) => {
      const c = (globalThis as unknown as { chrome: Tabs }).chrome;
      const t = await c.tabs.get(id);
      await c.tabs.create({ windowId: t.windowId, url: "about:blank", active: true });
    }, a.tabId);
    // The browser's own word (Playwright keeps every page it drives looking visible).
    const active = (id: number) => popup.evaluate(async (i) => (await (globalThis as unknown as { chrome: Tabs }).chrome.tabs.get(i)).active, id);
    expect(await active(a.tabId)).toBe(false);

    const pdf = await raw(mcp, "print_to_pdf", { tabId: a.tabId, name: "report" });
    expect(pdf.isError, pdf.json.slice(0, 2000)).not.toBe(true);
    const link = pdf.links[0] as Link;
    expect(link).toMatchObject({ type: "resource_link", name: "report.pdf", mimeType: "application/pdf" });
    expect(link.size).toBeGreaterThan(1000);
    // The megabytes stay out of the agent's context: the result is a few hundred characters.
    expect(pdf.json.length).toBeLessThan(2000);
    expect(pdf.json).not.toContain("JVBER"); // base64 of "%PDF"
    // Printing did not bring the tab forward.
    expect(await active(a.tabId)).toBe(false);
    const back = await read(mcp, link.uri);
    expect(back.mimeType).toBe("application/pdf");
    expect(back.bytes.subarray(0, 5).toString("latin1")).toBe("%PDF-");
    expect(back.bytes.length).toBe(link.size);
    // On disk in this session's own folder of the sandbox, owner-only.
    const folder = folderOf(link.uri);
    expect(folder).toMatch(/-e2e-/);
    const onDisk = join(torii.filesRoot, folder, "report.pdf");
    expect((await readFile(onDisk)).equals(back.bytes)).toBe(true);
    expect((await stat(onDisk)).mode & 0o777).toBe(0o600);

    const note = await saved(mcp, "save_to_file", { name: "notes.md", text: "# Findings\nrevenue grew\n" });
    expect(note).toMatchObject({ name: "notes.md", mimeType: "text/markdown", size: 24 });
    expect((await read(mcp, note.uri)).text).toBe("# Findings\nrevenue grew\n");
    // The same name again is a new file, never an overwrite.
    const again = await saved(mcp, "save_to_file", { name: "notes.md", text: "second" });
    expect(again.name).toBe("notes (2).md");
    expect((await read(mcp, note.uri)).text).toBe("# Findings\nrevenue grew\n");

    const shot = await raw(mcp, "screenshot", { tabId: b.tabId, format: "png", saveAs: "page.png" });
    expect(shot.isError, shot.json.slice(0, 2000)).not.toBe(true);
    expect(shot.content.some((c) => c.type === "image"), "no image block when saved as a file").toBe(false);
    const png = shot.links[0] as Link;
    expect(png).toMatchObject({ name: "page.png", mimeType: "image/png" });
    const pngBack = await read(mcp, png.uri);
    expect(pngBack.bytes.subarray(1, 4).toString("latin1")).toBe("PNG");
    expect(pngBack.bytes.length).toBe(png.size);

    // resources/list is this session's files.
    const listed = (await mcp.client.listResources()).resources;
    expect(listed.map((r) => r.name).sort()).toEqual(["notes (2).md", "notes.md", "page.png", "report.pdf"]);
    expect(listed.find((r) => r.name === "report.pdf")).toMatchObject({ uri: link.uri, mimeType: "application/pdf", size: link.size });

    // upload takes the saved file by name (its resource URI works too).
    const up = await rig().open("upload.html");
    const upl = await mcp.call("upload", { tabId: up.tabId, selector: "#file", files: [note.uri] });
    expect(upl.isError, upl.text).toBe(false);
    expect(await up.page.evaluate(() => (document.getElementById("file") as HTMLInputElement).files?.[0]?.text())).toBe("# Findings\nrevenue grew\n");
  });

  test("a download the person allowed lands in the session's folder, even one named ../../.bashrc", async () => {
    const { mcp, torii } = rig();
    const t = await rig().open("files.html");
    const before = new Set((await mcp.client.listResources()).resources.map((r) => r.name));
    const fresh = async (what: string) =>
      pollUntil(what, async () => (await mcp.client.listResources()).resources.find((r) => !before.has(r.name)), { timeoutMs: 20_000, intervalMs: 100 });

    expect((await mcp.call("click", { tabId: t.tabId, selector: "#dl" })).isError).toBe(false);
    const csv = await fresh("the allowed download in resources/list");
    before.add(csv.name);
    expect(csv.name).toBe("report.csv");
    const got = await read(mcp, csv.uri);
    expect(got.bytes.toString("utf8")).toBe("attachment report.csv\n");
    // Moved out of the browser's folder into the sandbox.
    const folder = folderOf(csv.uri);
    expect(await readFile(join(torii.filesRoot, folder, "report.csv"), "utf8")).toBe("attachment report.csv\n");
    expect(await readdir(join(dlDir, "torii", folder))).not.toContain("report.csv");

    expect((await mcp.call("click", { tabId: t.tabId, selector: "#evil" })).isError).toBe(false);
    const evil = await fresh("the ../../.bashrc download in resources/list");
    expect(evil.name).not.toMatch(/[\\/]|^\./);
    expect((await read(mcp, evil.uri)).bytes.toString("utf8")).toBe("attachment ../../.bashrc\n");
    expect(await readdir(join(torii.filesRoot, folder))).toContain(evil.name);
    // Nothing climbed out: no .bashrc next to the sandbox, its parents, or the browser's folder.
    for (const d of [join(torii.filesRoot, folder), torii.filesRoot, dirname(torii.filesRoot), dirname(dirname(torii.filesRoot)), dlDir, join(dlDir, "torii")]) {
      expect(await readdir(d).catch(() => [] as string[]), d).not.toContain(".bashrc");
    }
  });

  test("bad input: path separators, a missing file, a symlink into /etc, another session's file; a PDF over the request cap arrives in chunks", async () => {
    const { mcp, torii } = rig();
    const t = await rig().open("files.html");
    for (const [tool, args] of [
      ["save_to_file", { name: "../../.bashrc", text: "x" }],
      ["save_to_file", { name: "a/b.txt", text: "x" }],
      ["save_to_file", { name: "a\\b.txt", text: "x" }],
      ["print_to_pdf", { tabId: t.tabId, name: "../out.pdf" }],
      ["screenshot", { tabId: t.tabId, saveAs: "/tmp/shot.png" }],
      ["upload", { tabId: t.tabId, selector: "#dl", files: ["/etc/passwd"] }],
    ] as const) {
      const r = await mcp.call(tool, args);
      expect(r.error?.code, `${tool} ${JSON.stringify(args)}: ${r.text}`).toBe("invalid_argument");
      expect(r.text).toMatch(/path separator|plain file name/);
    }

    const mine = await saved(mcp, "save_to_file", { name: "mine.txt", text: "mine" });
    const folder = folderOf(mine.uri);
    const missing = await readError(mcp, `torii://files/${folder}/nope.txt`);
    expect(missing.code).toBe(-32602);
    expect(missing.message).toContain("not_found");
    expect(missing.message).toContain("resources/list");

    // A symlink planted in the session's folder, pointing into /etc: never read, listed or uploaded.
    await symlink("/etc/passwd", join(torii.filesRoot, folder, "passwd.txt"));
    await mkdir(join(torii.filesRoot, folder, "sub"));
    const link = await readError(mcp, `torii://files/${folder}/passwd.txt`);
    expect(link.code).toBe(-32602);
    expect(link.message).toBe(missing.message);
    const names = (await mcp.client.listResources()).resources.map((r) => r.name);
    expect(names).toContain("mine.txt");
    expect(names).not.toContain("passwd.txt");
    expect(names).not.toContain("sub");
    const up = await rig().open("upload.html");
    const viaLink = await mcp.call("upload", { tabId: up.tabId, selector: "#file", files: ["passwd.txt"] });
    expect(viaLink.error?.code, viaLink.text).toBe("not_found");
    expect(await up.page.evaluate(() => (document.getElementById("file") as HTMLInputElement).files?.length ?? 0)).toBe(0);

    // Another session's file: the same answer as a missing one, naming nothing of it.
    const other = await Mcp.connect(torii, "other");
    let theirsUri = "";
    try {
      const theirs = await saved(other, "save_to_file", { name: "their-secret.txt", text: "sentinel-7f3a" });
      theirsUri = theirs.uri;
      expect(folderOf(theirs.uri)).not.toBe(folder);
      expect((await read(other, theirs.uri)).text).toBe("sentinel-7f3a");
      const e = await readError(mcp, theirs.uri);
      expect(e.code).toBe(-32602);
      expect(e.message).toBe(missing.message);
      expect(JSON.stringify(e)).not.toContain("sentinel");
      // Naming the other folder's file from this session's folder does not reach it either.
      expect((await readError(mcp, `torii://files/${folder}/their-secret.txt`)).message).toBe(missing.message);
      expect((await readError(mcp, `torii://files/${folder}/..%2F${folderOf(theirs.uri)}%2Ftheir-secret.txt`)).code).toBe(-32602);
      expect((await mcp.client.listResources()).resources.map((r) => r.name)).not.toContain("their-secret.txt");
      const stolen = await mcp.call("upload", { tabId: up.tabId, selector: "#file", files: [theirs.uri] });
      expect(stolen.error?.code, stolen.text).toBe("invalid_argument");
    } finally {
      await other.close();
    }
    // The session ended; what the person asked to save stays on disk.
    expect(await readFile(join(torii.filesRoot, folderOf(theirsUri), "their-secret.txt"), "utf8")).toBe("sentinel-7f3a");

    // A PDF several times the link's 1 MiB request cap arrives whole, in chunks (SECURITY I-81);
    // nothing half-sent is left beside it.
    const big = await rig().open("files.html?big=1");
    const r = await mcp.call("print_to_pdf", { tabId: big.tabId, name: "big.pdf" }, 58_000);
    expect(r.isError, r.text.slice(0, 500)).toBe(false);
    const bigLink = r.data.file as Link;
    expect(bigLink.size).toBeGreaterThan(4 * 1024 * 1024);
    const bigBack = await read(mcp, bigLink.uri);
    expect(bigBack.bytes.length).toBe(bigLink.size);
    expect(bigBack.bytes.subarray(0, 5).toString("latin1")).toBe("%PDF-");
    expect(await readdir(join(torii.filesRoot, ".partial")).catch(() => [] as string[])).toEqual([]);
  });
});

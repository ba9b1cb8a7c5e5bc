// The perception tools through the real path — MCP client (official TS SDK) → `torii mcp`
// → the daemon → the extension in headless Chromium → fixture pages on loopback — asserting what
// the page really is, read back through Playwright.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, test } from "vitest";
import { repoRoot } from "../src/env.ts";
import { describeBrowser } from "../src/harness.ts";
import { imageSize } from "../src/image.ts";
import { refOf } from "../src/mcp.ts";
import { useToolsRig } from "../src/tools-rig.ts";

describeBrowser("browser tools: perception", () => {
  const rig = useToolsRig();

  test("the catalogue served by torii mcp is docs/tools.md's (names, order, read/write class, size, instructions)", async () => {
    const md = await readFile(join(repoRoot, "docs", "tools.md"), "utf8");
    // The default catalogue: a tool of a group ("write · group `proxy`") is served only when the
    // person turns its group on, so its row does not match.
    const documented = [...md.matchAll(/^\| \[`([a-z_]+)`\]\(#[a-z_]+\) \| ([a-z, ]+) \|/gm)].map((m) => ({
      name: m[1],
      class: m[2],
    }));
    expect(documented.length).toBeGreaterThan(20);
    // The daemon's own tools (status), in their section.
    const daemonSection = md.split("## Daemon tools")[1]?.split("\n## ")[0] ?? "";
    const daemonTools = [...daemonSection.matchAll(/^\| `([a-z_]+)` \| ([a-z, ]+) \|/gm)].map((m) => ({ name: m[1], class: m[2] }));
    expect(daemonTools.map((t) => t.name)).toEqual(["status"]);
    const listed = await rig().mcp.listTools();
    const rows = listed.map((t) => ({
      name: t.name,
      class: t.annotations?.readOnlyHint ? "read" : t.annotations?.destructiveHint !== false ? "write, destructive" : "write",
    }));
    // The Go SDK lists tools sorted by name; the registry's order is the documentation's.
    const byName = (a: { name?: string }, b: { name?: string }) => String(a.name).localeCompare(String(b.name));
    expect(rows.sort(byName)).toEqual([...documented, ...daemonTools].sort(byName));
    for (const t of listed) {
      if (t.annotations) expect(t.annotations.readOnlyHint, `${t.name} readOnlyHint`).toBeTypeOf("boolean");
      expect(t.inputSchema.type, `${t.name} inputSchema`).toBe("object");
    }
    // The whole tools/list costs context on every agent turn (≤ 12,600 characters). The
    // daemon serves the registry's wire form plus its own tools; docs/tools.md states the total as
    // agents get it, to the character.
    const stated = Number(/tools\/list` is ([\d,]+) characters/.exec(md)?.[1]?.replace(/,/g, ""));
    const served = JSON.stringify({ tools: listed }).length;
    const largest = listed.map((t) => [t.name, JSON.stringify(t).length] as const).sort((a, b) => b[1] - a[1]).slice(0, 3);
    console.log(`tools/list served by torii mcp: ${listed.length} tools, ${served} characters; largest: ${largest.map(([n, c]) => `${n} ${c}`).join(", ")}`);
    expect(served).toBeLessThanOrEqual(12_600);
    expect(served).toBe(stated);
    // The conventions the tools do not repeat reach the agent once, as the server's instructions.
    const conventions = md.split("## Conventions\n\n")[1]?.split("\n")[0] ?? "";
    expect(conventions.length).toBeGreaterThan(200);
    expect(rig().mcp.client.getInstructions()).toContain(conventions);
  });

  test("tabs lists the tab navigate opened, with its id, title and URL", async () => {
    const { tabId, url, page } = await rig().open("form.html");
    const r = await rig().mcp.ok("tabs");
    const tabs = r.data.tabs as { tabId: number; url: string; title: string; active: boolean }[];
    const mine = tabs.find((t) => t.tabId === tabId);
    expect(mine).toMatchObject({ url, title: "Sign-up form", active: true });
    expect(r.text).toContain(`[${tabId}]`);
    expect(await page.title()).toBe("Sign-up form");
  });

  test("snapshot: outline with refs and states; interactive; root subtree", async () => {
    const { tabId } = await rig().open("form.html");
    const s = await rig().mcp.ok("snapshot", { tabId });
    expect(s.text).toMatch(/\n\s*heading "Create account"/);
    expect(s.text).toMatch(/\n\s*textbox "Email" \[[a-gi-z]+\d+\].*\[required\]/);
    expect(s.text).toMatch(/\n\s*checkbox "Remember me" \[[a-gi-z]+\d+\].*\[checked\]/);
    expect(s.text).toMatch(/\n\s*button "Delete".*\[disabled\]/);
    expect(s.text).not.toContain("hidden-token");
    const email = refOf(s.text, "textbox", "Email");

    const i = await rig().mcp.ok("snapshot", { tabId, interactive: true });
    expect(i.text.length).toBeLessThan(s.text.length);
    expect(i.text).not.toContain("Paragraph");
    // Refs are stable for the same element within a document.
    expect(refOf(i.text, "textbox", "Email")).toBe(email);

    const sub = await rig().mcp.ok("snapshot", { tabId, root: "fieldset" });
    expect(sub.text).toMatch(/radio "Pro"/);
    expect(sub.text).not.toMatch(/textbox "Email"/);
  });

  test("snapshot covers open shadow roots (nested) and a ref inside one acts on it", async () => {
    const { tabId, page } = await rig().open("shadow.html");
    const s = await rig().mcp.ok("snapshot", { tabId });
    expect(s.text).toMatch(/button "Save card" \[[a-gi-z]+\d+\]/);
    expect(s.text).toMatch(/textbox "Card holder" \[[a-gi-z]+\d+\]/);
    expect(s.text).toMatch(/link "Inner link" \[[a-gi-z]+\d+\]/);
    expect(s.text).toMatch(/button "Close panel" \[[a-gi-z]+\d+\]/);
    expect(s.text).not.toContain("Hidden in shadow");
    await rig().mcp.ok("click", { tabId, ref: refOf(s.text, "button", "Save card") });
    expect(await page.locator("#log").textContent()).toBe("saved");
  });

  test("snapshot covers same- and cross-origin iframes; their refs act inside the frame", async () => {
    const site = rig().site;
    const { tabId, page } = await rig().open(`iframes.html?x=${site.crossPort}`);
    await page.frameLocator("#cross").locator("#pay").waitFor({ timeout: 10_000 });
    const s = await rig().mcp.ok("snapshot", { tabId });
    expect(s.text).toMatch(/button "Top button"/);
    // Both frames' contents appear, each with its own refs.
    const pays = [...s.text.matchAll(/button "Pay now" \[([a-gi-z]+\d+)\]/g)].map((m) => m[1] as string);
    expect(pays).toHaveLength(2);
    expect(new Set(pays).size).toBe(2);
    const cards = [...s.text.matchAll(/textbox "Card number" \[([a-gi-z]+\d+)\]/g)].map((m) => m[1] as string);
    expect(cards).toHaveLength(2);

    // The outline is in document order: same-origin frame first, then the cross-origin one.
    await rig().mcp.ok("fill", { tabId, ref: cards[1], value: "4242" });
    await rig().mcp.ok("click", { tabId, ref: pays[1] });
    const cross = page.frameLocator("#cross");
    expect(await cross.locator("#card").inputValue()).toBe("4242");
    expect(await cross.locator("#paid").textContent()).toBe("paid");
    expect(await page.frameLocator("#same").locator("#paid").textContent()).toBe("");
    await rig().mcp.ok("mouse_click", { tabId, ref: pays[0] });
    expect(await page.frameLocator("#same").locator("#paid").textContent()).toBe("paid");
  });

  test("snapshot maxChars pages through the whole outline with a cursor; every line once", async () => {
    const { tabId } = await rig().open("table.html?rows=300");
    const full = await rig().mcp.ok("snapshot", { tabId, maxChars: 200_000 });
    expect(full.data.nextCursor).toBeUndefined();
    const all = full.text.split("\n").slice(1); // minus the header line
    const pages: string[] = [];
    let r = await rig().mcp.ok("snapshot", { tabId, maxChars: 2_000 });
    let first = true;
    for (let n = 0; n < 100; n++) {
      const body = r.text.split("\n").filter((l) => !/^\[more: cursor=/.test(l));
      pages.push(...(first ? body.slice(1) : body));
      first = false;
      expect(r.text.length).toBeLessThan(2_200);
      const cursor = r.data.nextCursor as string | undefined;
      if (!cursor) break;
      r = await rig().mcp.ok("snapshot", { tabId, maxChars: 2_000, cursor });
    }
    expect(pages.length).toBeGreaterThan(300);
    expect(pages.join("\n")).toBe(all.join("\n"));
  });

  test("snapshot diff reports only what changed since this tab's previous snapshot", async () => {
    const { tabId, page } = await rig().open("form.html");
    const base = await rig().mcp.ok("snapshot", { tabId });
    const none = await rig().mcp.ok("snapshot", { tabId, diff: true });
    expect(none.text).toContain("(no changes)");
    await page.evaluate(() => {
      document.getElementById("out")!.textContent = "Account created";
      document.getElementById("news")!.setAttribute("disabled", "");
    });
    const d = await rig().mcp.ok("snapshot", { tabId, diff: true });
    expect(d.data.diff).toMatchObject({ added: expect.any(Number), removed: expect.any(Number) });
    expect(d.text).toContain("Account created");
    expect(d.text).toMatch(/checkbox "Send me news".*\[disabled\]/);
    expect(d.text).not.toContain("Create account\"");
    expect(d.text.length).toBeLessThan(base.text.length / 3);
  });

  test("find: by role + name, exact matches first; by text; refs usable", async () => {
    const { tabId, page } = await rig().open("form.html");
    const byRole = await rig().mcp.ok("find", { tabId, role: "checkbox" });
    expect(byRole.data.total).toBe(2);
    const named = await rig().mcp.ok("find", { tabId, role: "link", name: "Terms" });
    const matches = named.data.matches as { line: string; ref?: string }[];
    expect(matches[0]?.line).toMatch(/link "Terms of service"/);
    const exact = await rig().mcp.ok("find", { tabId, name: "Email" });
    expect((exact.data.matches as { line: string }[])[0]?.line).toMatch(/textbox "Email"/);
    const byText = await rig().mcp.ok("find", { tabId, text: "Click div" });
    expect(byText.data.total).toBeGreaterThanOrEqual(1);
    const none = await rig().mcp.ok("find", { tabId, role: "button", name: "No such button" });
    expect(none.data.total).toBe(0);
    // The ref from find acts on that element.
    const news = await rig().mcp.ok("find", { tabId, role: "checkbox", name: "Send me news" });
    const ref = /\[([a-gi-z]+\d+)\]/.exec((news.data.matches as { line: string }[])[0]?.line ?? "")?.[1];
    expect(ref).toBeDefined();
    await rig().mcp.ok("click", { tabId, ref });
    expect(await page.locator("#news").isChecked()).toBe(true);
  });

  test("read_text paginates by offset/maxChars without splitting a character", async () => {
    const { tabId, page } = await rig().open("article.html");
    const whole = await rig().mcp.ok("read_text", { tabId, maxChars: 200_000 });
    const total = whole.data.total as number;
    expect(whole.text).toContain("Last line 🏁");
    expect(whole.text).not.toContain("Hidden paragraph");
    const visible = await page.evaluate(() => document.body.innerText);
    expect(visible).toContain("Paragraph 60");
    let offset = 0;
    let joined = "";
    for (let n = 0; n < 400 && offset < total; n++) {
      const r = await rig().mcp.ok("read_text", { tabId, offset, maxChars: 101 });
      const body = r.text.replace(/\n\[more: offset=\d+ of \d+\]$/, "");
      // Never a lone surrogate at either end of a page.
      expect(body).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
      expect([...body].length, "maxChars counts code points").toBeLessThanOrEqual(101);
      joined += body;
      if (r.data.nextOffset === undefined) break;
      expect(r.data.nextOffset as number).toBeGreaterThan(offset);
      offset = r.data.nextOffset as number;
    }
    expect(joined).toBe(whole.text.replace(/\n\[more: offset=\d+ of \d+\]$/, ""));
    // A subtree only.
    const li = await rig().mcp.ok("read_text", { tabId, root: "ul" });
    expect(li.text).toContain("First 🍎");
    expect(li.text).not.toContain("Paragraph");
  });

  test("get_state reports exists/visible/enabled/checked/box/inViewport and never the value", async () => {
    const { tabId, page } = await rig().open("form.html");
    await page.locator("#password").fill("hunter2-secret");
    await page.locator("#email").fill("me@example.test");
    const pw = await rig().mcp.ok("get_state", { tabId, selector: "#password" });
    expect(pw.data).toMatchObject({ exists: true, visible: true, enabled: true, inViewport: true });
    expect(JSON.stringify(pw.data) + pw.text).not.toContain("hunter2");
    const email = await rig().mcp.ok("get_state", { tabId, selector: "#email" });
    expect(JSON.stringify(email.data) + email.text).not.toContain("me@example");
    const box = email.data.box as { x: number; y: number; w: number; h: number };
    const real = await page.locator("#email").boundingBox();
    expect(Math.abs(box.x - (real?.x ?? -99))).toBeLessThan(2);
    expect(Math.abs(box.w - (real?.width ?? -99))).toBeLessThan(2);
    const rem = await rig().mcp.ok("get_state", { tabId, selector: "#remember" });
    expect(rem.data.checked).toBe(true);
    const del = await rig().mcp.ok("get_state", { tabId, selector: "button[disabled]" });
    expect(del.data.enabled).toBe(false);
    const hidden = await rig().mcp.ok("get_state", { tabId, selector: "input[type=hidden]" });
    expect(hidden.data).toMatchObject({ exists: true, visible: false });
    expect(JSON.stringify(hidden.data)).not.toContain("hidden-token");
  });

  test("screenshot: JPEG by default, PNG, maxWidth, region, element and fullPage decode at the stated size", async () => {
    const { tabId, page } = await rig().open("actions.html");
    // Attaching chrome.debugger may show Chrome's "is debugging this browser" bar, which resizes
    // the viewport once: measure the page only after the first capture has attached it.
    // A result with an image has no structuredContent (the image rides in content only): the
    // stated size is the text's "WxH".
    const stated = (text: string) => {
      const m = /: (\d+)x(\d+) /.exec(text);
      return { width: Number(m?.[1]), height: Number(m?.[2]) };
    };
    const measure = () => page.evaluate(() => ({ w: innerWidth, h: innerHeight, dpr: devicePixelRatio, full: document.documentElement.scrollHeight }));
    await expect
      .poll(async () => {
        const r = await rig().mcp.ok("screenshot", { tabId, quality: 10 });
        const m = await measure();
        return stated(r.text).width === m.w * m.dpr && stated(r.text).height === m.h * m.dpr;
      }, { timeout: 10_000 })
      .toBe(true);
    const vp = await measure();
    const shot = async (args: Record<string, unknown>) => {
      const r = await rig().mcp.ok("screenshot", { tabId, ...args });
      expect(r.images).toHaveLength(1);
      const img = r.images[0]!;
      const size = imageSize(Buffer.from(img.data, "base64"));
      expect(r.data).toEqual({});
      expect(size).toMatchObject(stated(r.text));
      return { ...size, mime: img.mimeType, type: size.type };
    };
    const jpeg = await shot({});
    expect(jpeg).toMatchObject({ mime: "image/jpeg", type: "jpeg", width: Math.round(vp.w * vp.dpr), height: Math.round(vp.h * vp.dpr) });
    const png = await shot({ format: "png" });
    expect(png).toMatchObject({ mime: "image/png", type: "png", width: jpeg.width, height: jpeg.height });
    const small = await shot({ maxWidth: 320 });
    expect(small.width).toBe(320);
    expect(Math.abs(small.height - Math.round((jpeg.height * 320) / jpeg.width))).toBeLessThanOrEqual(1);
    const region = await shot({ format: "png", region: { x: 10, y: 20, width: 200, height: 100 } });
    expect(region).toMatchObject({ width: 200 * vp.dpr, height: 100 * vp.dpr });
    const el = await shot({ selector: "#hover-target" });
    const b = await page.locator("#hover-target").boundingBox();
    expect(Math.abs(el.width - Math.round((b?.width ?? 0) * vp.dpr))).toBeLessThanOrEqual(1);
    const full = await shot({ fullPage: true });
    expect(full.height).toBe(Math.round(vp.full * vp.dpr));
    expect(full.height).toBeGreaterThan(jpeg.height * 3);
  });

  test("wait_for: appear, disappear, and found:false (not an error) on timeout", async () => {
    const { tabId, page } = await rig().open("actions.html");
    await page.locator("#show").click();
    const appear = await rig().mcp.ok("wait_for", { tabId, selector: "#late", timeoutMs: 5_000 });
    expect(appear.data.found).toBe(true);
    expect(await page.locator("#late").textContent()).toBe("Arrived late");

    await page.locator("#remove").click();
    const gone = await rig().mcp.ok("wait_for", { tabId, text: "Still here", state: "disappear", timeoutMs: 5_000 });
    expect(gone.data.found).toBe(true);
    expect(await page.locator("#vanish").count()).toBe(0);

    const t0 = Date.now();
    const never = await rig().mcp.call("wait_for", { tabId, selector: "#never", timeoutMs: 400 });
    expect(never.isError).toBe(false);
    expect(never.data.found).toBe(false);
    expect(Date.now() - t0).toBeLessThan(5_000);

    // A ref from a snapshot, waited on until its element goes.
    const s = await rig().mcp.ok("snapshot", { tabId });
    const ref = refOf(s.text, "button", "Churn");
    await page.evaluate(() => setTimeout(() => document.getElementById("churn")?.remove(), 200));
    const refGone = await rig().mcp.ok("wait_for", { tabId, ref, state: "disappear", timeoutMs: 5_000 });
    expect(refGone.data.found).toBe(true);
  });

  test("settle waits until the DOM is quiet", async () => {
    const { tabId, page } = await rig().open("actions.html");
    await page.locator("#churn").click();
    const r = await rig().mcp.ok("settle", { tabId, quietMs: 200, timeoutMs: 5_000 });
    expect(r.text).toBe("settled");
    // The churn (12 changes, 50 ms apart) was over before settle answered.
    expect(await page.locator("#churned").textContent()).toBe("12");
  });
});

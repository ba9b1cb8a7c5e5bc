// The action tools through the real path (MCP client → `torii mcp` → daemon → extension →
// page), each asserting the page's resulting state read back through Playwright.
import { expect, test } from "vitest";
import { describeBrowser } from "../src/harness.ts";
import { refOf } from "../src/mcp.ts";
import { useToolsRig } from "../src/tools-rig.ts";

const text = async (p: import("playwright-core").Page, sel: string) => ((await p.locator(sel).textContent()) ?? "").trim();

describeBrowser("browser tools: actions", () => {
  const rig = useToolsRig();

  test("navigate: a new tab, a given tab, waitFor, background, a redirect chain", async () => {
    const { mcp, site } = rig();
    const a = await rig().open("form.html");
    expect(a.opened.data).toMatchObject({ created: true, tabId: a.tabId, title: "Sign-up form" });

    // The same tab, elsewhere, waiting for an element of the new page.
    const r = await mcp.ok("navigate", { tabId: a.tabId, url: site.url("landing.html"), waitFor: { selector: "#landed" } });
    expect(r.data.tabId).toBe(a.tabId);
    expect(r.data.created).toBeUndefined();
    expect(r.data.waitFor).toMatchObject({ found: true });
    await expect.poll(() => a.page.url()).toBe(site.url("landing.html"));
    expect(await text(a.page, "#landed")).toBe("Landed");

    // /r1 → 302 /r2 → 302 /final: the result names where the tab landed.
    const red = await mcp.ok("navigate", { tabId: a.tabId, url: site.url("r1?via=chain") });
    expect(red.data.url).toBe(site.url("final?via=chain"));
    expect(await text(a.page, "#final")).toBe("Redirected here");

    // A background tab is opened but not focused.
    const bg = await mcp.ok("navigate", { url: site.url("landing.html?bg=1"), newTab: true, background: true });
    expect(bg.data).toMatchObject({ created: true });
    const tabs = (await mcp.ok("tabs")).data.tabs as { tabId: number; url: string }[];
    expect(tabs.find((t) => t.tabId === bg.data.tabId)?.url).toBe(site.url("landing.html?bg=1"));
    await mcp.ok("close_tab", { tabId: bg.data.tabId });
  });

  test("SPA route change (pushState): click a route link, observe the diff; history back/forward", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("spa.html");
    const s = await mcp.ok("snapshot", { tabId });
    expect(s.text).toMatch(/heading "Home"/);
    const r = await mcp.ok("click", { tabId, ref: refOf(s.text, "link", "Settings"), observe: "diff" });
    expect(r.text).toMatch(/heading "Settings"/);
    expect(r.text).toMatch(/button "Save settings" \[[a-gi-z]+\d+\]/);
    await expect.poll(() => new URL(page.url()).searchParams.get("view")).toBe("settings");
    expect(await text(page, "#renders")).toBe("2"); // one render per route: no reload

    await mcp.ok("click", { tabId, selector: "a[data-route=billing]" });
    await expect.poll(() => new URL(page.url()).searchParams.get("view")).toBe("billing");
    const back = await mcp.ok("history", { tabId, direction: "back", steps: 2, observe: "snapshot" });
    expect(back.text).toMatch(/heading "Home"/);
    await expect.poll(() => new URL(page.url()).searchParams.get("view")).toBeNull();
    await mcp.ok("history", { tabId, direction: "forward" });
    await expect.poll(() => new URL(page.url()).searchParams.get("view")).toBe("settings");
    expect(await text(page, "#view h2")).toBe("Settings");
    // Still the one document the SPA started with.
    expect(Number(await text(page, "#renders"))).toBe(5);
  });

  test("history across documents and reload (bypassCache) load a new document", async () => {
    const { mcp, site } = rig();
    const { tabId, page, url } = await rig().open("actions.html");
    await mcp.ok("navigate", { tabId, url: site.url("landing.html") });
    const back = await mcp.ok("history", { tabId, direction: "back", waitFor: { selector: "#hover-target" } });
    expect(back.data.url).toBe(url);
    await expect.poll(() => page.url()).toBe(url);
    const fwd = await mcp.ok("history", { tabId, direction: "forward" });
    expect(fwd.data.url).toBe(site.url("landing.html"));
    const bad = await mcp.call("history", { tabId, direction: "forward" });
    expect(bad.error?.code).toBe("invalid_argument");

    await page.evaluate(() => {
      (window as unknown as { marker: number }).marker = 1;
      document.body.dataset.marker = "set";
    });
    await mcp.ok("reload", { tabId, bypassCache: true });
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker ?? null)).toBeNull();
    expect(await page.evaluate(() => document.body.dataset.marker ?? null)).toBeNull();
    const r2 = await mcp.ok("reload", { tabId, observe: "text" });
    expect(r2.text).toContain("Landed");
  });

  test("close_tab closes exactly that tab", async () => {
    const { mcp } = rig();
    const keep = await rig().open("landing.html");
    const gone = await rig().open("landing.html");
    const r = await mcp.ok("close_tab", { tabId: gone.tabId });
    expect(r.data).toMatchObject({ tabId: gone.tabId, closed: true });
    await expect.poll(() => gone.page.isClosed()).toBe(true);
    const ids = ((await mcp.ok("tabs")).data.tabs as { tabId: number }[]).map((t) => t.tabId);
    expect(ids).not.toContain(gone.tabId);
    expect(ids).toContain(keep.tabId);
    expect(keep.page.isClosed()).toBe(false);
  });

  test("click: DOM click by ref and selector; act-and-look with observe text and snapshot", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("form.html");
    // The form's required fields, so that submitting it passes validation.
    await page.locator("#email").fill("ada@example.test");
    await page.locator("#password").fill("pw");
    await mcp.ok("click", { tabId, selector: "#clicky" });
    expect(await text(page, "#clicky")).toBe("clicked");
    const s = await mcp.ok("snapshot", { tabId });
    const r = await mcp.ok("click", { tabId, ref: refOf(s.text, "button", "Create account"), observe: "text" });
    expect(r.text).toContain("submitted");
    expect(await text(page, "#out")).toBe("submitted");
    const o = await mcp.ok("click", { tabId, ref: refOf(s.text, "checkbox", "Send me news"), observe: "snapshot" });
    expect(o.text).toMatch(/checkbox "Send me news" \[[a-gi-z]+\d+\].*\[checked\]/);
    expect(await page.locator("#news").isChecked()).toBe(true);
    // click works even under an overlay (a DOM click), unlike mouse_click.
  });

  test("mouse_click: real pointer events; covered reports the overlay's ref, and nothing is clicked", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("overlay.html");
    await page.evaluate(() => {
      const log: string[] = [];
      (window as unknown as { log: string[] }).log = log;
      for (const t of ["pointerdown", "mousedown", "mouseup", "click"]) document.addEventListener(t, (e) => log.push(`${t}:${(e.target as Element).id}:${(e as MouseEvent).isTrusted}`), true);
    });
    const s = await mcp.ok("snapshot", { tabId });
    const buy = refOf(s.text, "button", "Buy");
    const covered = await mcp.call("mouse_click", { tabId, ref: buy });
    expect(covered.error?.code).toBe("covered");
    const by = covered.error?.coveredBy as { ref?: string } | undefined;
    expect(by?.ref).toMatch(/^[a-gi-z]+\d+$/);
    expect(await text(page, "#r")).toBe("");
    expect(await page.evaluate(() => (window as unknown as { log: string[] }).log)).toEqual([]);

    // The fixed corner button is above the overlay: a real click reaches it.
    await mcp.ok("mouse_click", { tabId, selector: "#free" });
    expect(await page.evaluate(() => (window as unknown as { log: string[] }).log)).toEqual([
      "pointerdown:free:true", "mousedown:free:true", "mouseup:free:true", "click:free:true",
    ]);

    // The covering element's ref is a live ref of this tab: the overlay, over Buy's point.
    const cover = await mcp.ok("get_state", { tabId, ref: by?.ref });
    expect(cover.data).toMatchObject({ exists: true, visible: true });
    const cb = cover.data.box as { x: number; y: number; w: number; h: number };
    const bb = await page.locator("#buy").boundingBox();
    expect(cb.x <= (bb?.x ?? -1) && cb.y <= (bb?.y ?? -1) && cb.x + cb.w >= (bb?.x ?? 0) + (bb?.width ?? 0)).toBe(true);
    // Close the overlay, then Buy is reachable.
    await mcp.ok("mouse_click", { tabId, ref: refOf(s.text, "button", "Accept") });
    expect(await page.locator("#overlay").count()).toBe(0);
    await mcp.ok("mouse_click", { tabId, ref: buy });
    expect(await text(page, "#r")).toBe("bought");
  });

  test("hover: the page sees mouseover and opens its :hover menu", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("actions.html");
    expect(await page.locator("#menu").isVisible()).toBe(false);
    const r = await mcp.ok("hover", { tabId, selector: "#hover-target", observe: "snapshot" });
    expect(await text(page, "#hover-log")).toBe("mouseover mouseenter");
    expect(await page.locator("#menu").isVisible()).toBe(true);
    expect(r.text).toMatch(/menuitem "Sign out"/);
  });

  test("fill: a React-style controlled input sees the change; insertText into contenteditable", async () => {
    const { mcp } = rig();
    const c = await rig().open("controlled.html");
    const s = await mcp.ok("snapshot", { tabId: c.tabId });
    await mcp.ok("fill", { tabId: c.tabId, ref: refOf(s.text, "textbox", "Display name"), value: "Ada Lovelace" });
    expect(await text(c.page, "#state-name")).toBe('"Ada Lovelace"');
    expect(await c.page.locator("#name").inputValue()).toBe("Ada Lovelace");
    await mcp.ok("fill", { tabId: c.tabId, selector: "#about", value: "Line 1\nLine 2 😀" });
    expect(await text(c.page, "#state-about")).toBe(JSON.stringify("Line 1\nLine 2 😀"));
    // Replacing, not appending.
    await mcp.ok("fill", { tabId: c.tabId, selector: "#name", value: "Grace" });
    expect(await text(c.page, "#state-name")).toBe('"Grace"');
    expect(await text(c.page, "#calls")).toBe("3");

    const e = await rig().open("editor.html");
    await mcp.ok("fill", { tabId: e.tabId, selector: "#editor", value: "Fresh note", mode: "insertText" });
    expect((await e.page.locator("#editor").innerText()).trim()).toBe("Fresh note");
    expect(await text(e.page, "#events")).toMatch(/insertText/);
  });

  test("type: CDP text into a clicked field; keys mode; submit presses Enter", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("form.html");
    await page.locator("#email").fill("ada@example.test");
    await page.locator("#password").fill("pw");
    await mcp.ok("type", { tabId, selector: "#fullname", text: "Ada Lovelace" });
    expect(await page.locator("#fullname").inputValue()).toBe("Ada Lovelace");
    await page.evaluate(() => {
      const keys: string[] = [];
      (window as unknown as { keys: string[] }).keys = keys;
      document.getElementById("nick")!.addEventListener("keydown", (e) => keys.push(e.key));
    });
    await mcp.ok("type", { tabId, selector: "#nick", text: "ab1", keys: true });
    expect(await page.locator("#nick").inputValue()).toBe("ab1");
    expect(await page.evaluate(() => (window as unknown as { keys: string[] }).keys)).toEqual(["a", "b", "1"]);
    // Into the focused element (no target), then Enter submits the form.
    await mcp.ok("type", { tabId, text: "!", submit: true });
    expect(await page.locator("#nick").inputValue()).toBe("ab1!");
    expect(await text(page, "#out")).toBe("submitted");
  });

  test("press_key: Mod+A selects all (typing replaces it); Tab and Shift+Tab move focus", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("actions.html");
    await mcp.ok("type", { tabId, selector: "#a", text: "hello world" });
    await mcp.ok("press_key", { tabId, key: "Mod+A" });
    expect(await page.evaluate(() => {
      const a = document.getElementById("a") as HTMLInputElement;
      return [a.selectionStart, a.selectionEnd];
    })).toEqual([0, 11]);
    await mcp.ok("type", { tabId, text: "X" });
    expect(await page.locator("#a").inputValue()).toBe("X");

    await mcp.ok("press_key", { tabId, key: "Tab" });
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("b");
    await mcp.ok("press_key", { tabId, selector: "#c", key: "Shift+Tab" });
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("b");
    await mcp.ok("press_key", { tabId, key: "Shift+Tab" });
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("a");
    expect(await text(page, "#keys")).toMatch(/Shift\+Tab/);
    await mcp.ok("press_key", { tabId, key: "ArrowLeft", repeat: 1 });
    const bad = await mcp.call("press_key", { tabId, key: "Hyper+Nope" });
    expect(bad.error?.code).toBe("invalid_argument");
  });

  test("select_option: by value, label, index, and several in a multiple select", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("form.html");
    await mcp.ok("select_option", { tabId, selector: "#country", values: ["de"] });
    expect(await page.locator("#country").inputValue()).toBe("de");
    await mcp.ok("select_option", { tabId, selector: "#country", labels: ["Japan"] });
    expect(await page.locator("#country").inputValue()).toBe("jp");
    const s = await mcp.ok("snapshot", { tabId });
    await mcp.ok("select_option", { tabId, ref: refOf(s.text, "combobox", "Country"), indexes: [1] });
    expect(await page.locator("#country").inputValue()).toBe("fr");
    await mcp.ok("select_option", { tabId, selector: "#toppings", values: ["cheese", "olives"] });
    expect(await page.locator("#toppings").evaluate((e) => Array.from((e as HTMLSelectElement).selectedOptions).map((o) => o.value))).toEqual([
      "cheese",
      "olives",
    ]);
    // The page's change listeners saw each choice.
    expect(await text(page, "#changes")).toBe("country=de country=jp country=fr toppings=cheese,olives");
  });

  test("scroll: by delta, to bottom (atBottom), to top, to a ref", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("actions.html");
    const d = await mcp.ok("scroll", { tabId, dy: 500 });
    expect(await page.evaluate(() => scrollY)).toBe(500);
    expect(d.data.atBottom).toBe(false);
    const b = await mcp.ok("scroll", { tabId, to: "bottom" });
    expect(b.data.atBottom).toBe(true);
    expect(await page.evaluate(() => Math.ceil(scrollY + innerHeight) >= document.documentElement.scrollHeight - 1)).toBe(true);
    const t = await mcp.ok("scroll", { tabId, to: "top" });
    expect(t.data.atBottom).toBe(false);
    expect(await page.evaluate(() => scrollY)).toBe(0);
    const s = await mcp.ok("snapshot", { tabId });
    await mcp.ok("scroll", { tabId, ref: refOf(s.text, "button", "Bottom button") });
    const st = await mcp.ok("get_state", { tabId, selector: "#bottom-btn" });
    expect(st.data.inViewport).toBe(true);
    expect(await page.locator("#bottom-btn").evaluate((e) => {
      const r = e.getBoundingClientRect();
      return r.top >= 0 && r.bottom <= innerHeight;
    })).toBe(true);
  });

  test("reveal: scrolls a virtual list until the row exists; its ref clicks it", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("virtual-list.html");
    expect(await page.getByText("Message 3000", { exact: true }).count()).toBe(0);
    const r = await mcp.ok("reveal", { tabId, role: "button", name: "Message 3000" });
    expect(r.text).toMatch(/button "Message 3000" \[[a-gi-z]+\d+\]/);
    const ref = refOf(r.text, "button", "Message 3000");
    expect(await page.getByText("Message 3000", { exact: true }).isVisible()).toBe(true);
    await mcp.ok("click", { tabId, ref });
    expect(await text(page, "#opened")).toBe("opened 3000");
    // A far row is placed from the numbered rows in view: a jump, well within 5 scrolls.
    const far = await mcp.ok("reveal", { tabId, role: "button", name: "Message 9999", maxScrolls: 5 });
    expect(far.text).toMatch(/^button "Message 9999" \[[a-gi-z]+\d+\]$/);
    // Not rendered within maxScrolls: not_found, typed, not a hang.
    const none = await mcp.call("reveal", { tabId, role: "button", name: "Message 9999 (archived)", maxScrolls: 5 });
    expect(none.error?.code).toBe("not_found");
    // It stopped at its cap, short of the end, and says so (and how far it got).
    expect(none.error?.message).toMatch(/in 5 scrolls \(the maxScrolls cap\): stopped at y=\d+ of \d+/);
    expect(none.error?.message).not.toMatch(/to its end|whole list/);
  });

  test("reveal: the container by CSS selector; a bad selector and one matching nothing are typed errors naming it", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("virtual-list.html");
    const r = await mcp.ok("reveal", { tabId, role: "button", name: "Message 2000", container: "#viewport" });
    expect(r.text).toMatch(/button "Message 2000" \[[a-gi-z]+\d+\]/);
    expect(await page.getByText("Message 2000", { exact: true }).isVisible()).toBe(true);
    const bad = await mcp.call("reveal", { tabId, role: "button", name: "Message 1", container: "#viewport[" });
    expect(bad.error?.code).toBe("invalid_argument");
    expect(bad.error?.message).toContain("container");
    const none = await mcp.call("reveal", { tabId, role: "button", name: "Message 1", container: "#no-such-list" });
    expect(none.error?.code).toBe("not_found");
    expect(none.error?.message).toContain("container");
  });

  test("handle_dialog: alert, confirm (dismiss), prompt (text); no_dialog when none is open", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("dialogs.html");
    const a = await mcp.ok("click", { tabId, selector: "#alert" });
    expect(a.data.dialog).toMatchObject({ type: "alert", message: "Saved!" });
    const listed = ((await mcp.ok("tabs")).data.tabs as { tabId: number; dialog?: { type: string } }[]).find((t) => t.tabId === tabId);
    expect(listed?.dialog?.type).toBe("alert");
    const blocked = await mcp.call("snapshot", { tabId });
    expect(blocked.error?.code).toBe("dialog_blocking");
    await mcp.ok("handle_dialog", { tabId, accept: true });
    await expect.poll(() => text(page, "#result")).toBe("alert closed");

    const c = await mcp.ok("mouse_click", { tabId, selector: "#confirm" });
    expect(c.data.dialog).toMatchObject({ type: "confirm", message: "Delete the file?" });
    await mcp.ok("handle_dialog", { tabId, accept: false });
    await expect.poll(() => text(page, "#result")).toBe("confirm false");

    const p = await mcp.ok("click", { tabId, selector: "#prompt" });
    expect(p.data.dialog).toMatchObject({ type: "prompt", message: "Your name?" });
    const h = await mcp.ok("handle_dialog", { tabId, accept: true, promptText: "Ada", observe: "text" });
    expect(h.text).toContain('prompt "Ada"');
    expect(await text(page, "#result")).toBe('prompt "Ada"');

    const none = await mcp.call("handle_dialog", { tabId, accept: true });
    expect(none.error?.code).toBe("no_dialog");
  });

  /**
   * An agent's own tab leaves quietly (no prompt) unless the person has looked at it: look at it,
   * and wait until the extension counts it (its quiet-unload flag in the page turns off) before the
   * agent types. A look within a second of an agent's input or of a tab opening in that window is
   * not counted (SECURITY I-46), and bringing an already active tab of a focused window to the
   * front raises no event at all: so the person switches from a second agent tab to this one, once
   * the window is quiet, until one switch counts.
   */
  const personLooksAt = async (page: import("playwright-core").Page) => {
    const other = await rig().open("landing.html");
    const counted = () => page.evaluate(() => (globalThis as Record<string, unknown>).__toriiQuietUnload === false);
    for (let i = 0; i < 5 && !(await counted()); i++) {
      await other.page.bringToFront();
      await new Promise((r) => setTimeout(r, 1_300));
      await page.bringToFront();
      await expect.poll(counted, { timeout: 2_000 }).toBe(true).catch(() => undefined);
    }
    expect(await counted(), "the person's look at the tab was counted").toBe(true);
  };

  test("handle_dialog: beforeunload holds a navigation until accepted", async () => {
    const { mcp, site } = rig();
    const { tabId, page } = await rig().open("beforeunload.html");
    await personLooksAt(page);
    // Chrome asks only once the page has had a user gesture: type through CDP input.
    await mcp.ok("type", { tabId, selector: "#draft", text: "unsaved" });
    // Leaving through the page's own link (a real click): the prompt holds the navigation.
    const n = await mcp.ok("mouse_click", { tabId, selector: "#away" });
    if (!n.data.dialog) await expect.poll(async () => ((await mcp.ok("tabs")).data.tabs as { tabId: number; dialog?: unknown }[]).find((t) => t.tabId === tabId)?.dialog).toMatchObject({ type: "beforeunload" });
    else expect(n.data.dialog).toMatchObject({ type: "beforeunload" });
    expect(new URL(page.url()).pathname).toBe("/beforeunload.html");
    const h = await mcp.ok("handle_dialog", { tabId, accept: true, waitFor: { selector: "#landed" } });
    expect(h.data.waitFor).toMatchObject({ found: true });
    await expect.poll(() => page.url()).toBe(site.url("landing.html"));
  });

  test("close_tab: a beforeunload prompt holds the close; the result says so and accepting closes the tab", async () => {
    const { mcp } = rig();
    const { tabId, page } = await rig().open("beforeunload.html");
    // A tab the person looked at keeps its prompt (SECURITY I-46), once the page has had a gesture.
    await personLooksAt(page);
    await mcp.ok("type", { tabId, selector: "#draft", text: "unsaved" });
    const listed = async () => ((await mcp.ok("tabs")).data.tabs as { tabId: number; dialog?: unknown }[]).find((t) => t.tabId === tabId);
    const c = await mcp.ok("close_tab", { tabId });
    expect(c.data, c.text).toMatchObject({ tabId, closed: false, dialog: { type: "beforeunload" } });
    expect(c.text).toContain("handle_dialog");
    expect(c.text).not.toMatch(/^closed/);
    // Still the session's, still reachable, the prompt on it.
    expect(await listed()).toMatchObject({ tabId, dialog: { type: "beforeunload" } });
    expect(page.isClosed()).toBe(false);
    const closed = page.waitForEvent("close", { timeout: 10_000 });
    const h = await mcp.ok("handle_dialog", { tabId, accept: true });
    expect(h.data, h.text).toMatchObject({ accepted: true, closed: true });
    await closed;
    expect(await listed()).toBeUndefined();
  });

  test("a page that navigates itself right after the click: the action reports it, waitFor follows it", async () => {
    const { mcp, site } = rig();
    const { tabId, page } = await rig().open("navself.html");
    const r = await mcp.ok("click", { tabId, selector: "#go", waitFor: { selector: "#landed", timeoutMs: 10_000 } });
    expect(r.data.observeError, JSON.stringify(r.data)).toBeUndefined();
    expect(r.data.waitFor).toMatchObject({ found: true });
    await expect.poll(() => page.url()).toBe(site.url("landing.html?from=navself"));

    // The same with a look: the observation is of a whole document, old or new, never an error.
    const b = await rig().open("navself.html");
    const o = await mcp.ok("click", { tabId: b.tabId, selector: "#go", observe: "snapshot" });
    expect(o.data.observeError).toBeUndefined();
    expect(o.text).toMatch(/heading "(Landed|Leaving soon)"/);
  });
});

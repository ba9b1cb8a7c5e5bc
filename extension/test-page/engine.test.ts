// The page engine (page.js) in a real Chromium: outline, refs, actions, text, waits.
// Each test opens its own tab on a loopback fixture from testdata/pages.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Page } from "playwright-core";
import { call, inject, ok, open, setup, type Env } from "./harness";

let env: Env;
beforeAll(async () => {
  env = await setup();
}, 60_000);
afterAll(async () => {
  await env?.close();
});

/** 'role "name" [b12]' → b12, for the first line matching role and exact name. */
function refOf(text: string, role: string, name: string): string {
  const re = new RegExp(`(?:^|\\s)${role} "${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}" \\[([a-gi-z]+\\d+)\\]`);
  const m = re.exec(text);
  if (!m) throw new Error(`no ${role} "${name}" with a ref in:\n${text}`);
  return m[1] as string;
}

const allRefs = (text: string) => [...text.matchAll(/\[([a-gi-z]+\d+)\]/g)].map((m) => m[1] as string);

async function textOf(page: Page, sel: string): Promise<string> {
  return (await page.textContent(sel)) ?? "";
}

describe("snapshot outline", () => {
  test("every control of form.html has a ref and the right accessible name", async () => {
    const page = await open(env, "form.html");
    const s = await ok(page, "snapshot", {});
    const expected: [string, string, string?][] = [
      ["textbox", "Email", " [required]"],
      ["textbox", "Full name"],
      ["textbox", "Phone number"],
      ["textbox", "Postal code"],
      ["searchbox", "Search products"],
      ["textbox", "Nickname"],
      ["textbox", "Password", " [required] [password]"],
      ["checkbox", "Remember me", " [checked]"],
      ["checkbox", "Send me news"],
      ["radio", "Free", " [checked]"],
      ["radio", "Pro"],
      ["radio", "Team", " [disabled]"],
      ["combobox", "Country"],
      ["listbox", "Toppings", " [multiple]"],
      ["textbox", "About you"],
      ["textbox", "Account id", " [readonly]"],
      ["button", "Create account"],
      ["button", "Delete", " [disabled]"],
      ["button", "Clear form"],
      ["link", "Terms of service"],
      ["link", "Plan details"],
      ["button", "Custom action"],
    ];
    for (const [role, name, states] of expected) {
      const ref = refOf(s.text, role, name);
      if (states) expect(s.text).toContain(`${role} "${name}" [${ref}]${states}`);
      // The ref names exactly that element.
      const st = await ok(page, "getState", { ref });
      expect([st.role, st.name]).toEqual([role, name]);
    }
    expect(s.text).toMatch(/generic \[[a-gi-z]+\d+\]: Click div/);
    expect(s.text).toMatch(/group "Plan":\n  radio "Free"/);
    expect(s.text).not.toContain("hidden-token");
    expect(s.text).not.toContain("ACC-1"); // a readonly field's value is still a value
    // Labels name their control; they are not repeated as text.
    expect(s.text).not.toMatch(/text: Email/);
    await page.close();
  });

  test("labels.html: text that only repeats the control beside it is left out; one-control list items print as the control", async () => {
    const page = await open(env, "labels.html");
    const s = await ok(page, "snapshot", {});
    // The visible task text is already the checkbox's name.
    expect(s.text).toMatch(/checkbox "Done: Book venue" \[[a-gi-z]+\d+\]\n\s*button "Delete task: Book venue"/);
    expect(s.text).not.toMatch(/text: Book venue|text: Update roadmap/);
    // Whole words only: "Page 1" (the current page) is not the start of a link "Go to page 10".
    expect(s.text).toMatch(/text: Page 1\n\s*link "Go to page 10"/);
    // "Remove" is a whole word of "Remove everything": left out.
    expect(s.text).not.toMatch(/text: Remove\n/);
    // A list item that is one link prints as the link, straight under its list; a text item keeps its role.
    expect(s.text).toMatch(/navigation "Sections":\n\s*list:\n\s*link "Inbox" \[[a-gi-z]+\d+\]\n\s*link "Files" \[[a-gi-z]+\d+\]\n\s*listitem: Archive \(read only\)/);
    expect(s.text).not.toMatch(/listitem: link/);
    await page.close();
  });

  test("shadow.html: open shadow roots and slots, in flat-tree order, hidden parts skipped", async () => {
    const page = await open(env, "shadow.html");
    const s = await ok(page, "snapshot", {});
    const order = ['heading "Billing"', "paragraph: Slotted paragraph", 'button "Slotted action"', 'button "Save card"', 'textbox "Card holder"', 'heading "Nested panel"', 'link "Inner link"', 'button "Close panel"'];
    let last = -1;
    for (const o of order) {
      const i = s.text.indexOf(o);
      expect(i, o).toBeGreaterThan(last);
      last = i;
    }
    expect(s.text).not.toContain("Hidden in shadow");
    expect(s.text).not.toContain("Untitled"); // slot fallback replaced by slotted content
    for (const [role, name] of [["button", "Slotted action"], ["button", "Save card"], ["textbox", "Card holder"], ["link", "Inner link"], ["button", "Close panel"]] as const) {
      const st = await ok(page, "getState", { ref: refOf(s.text, role, name) });
      expect(st.name).toBe(name);
    }
    await ok(page, "domClick", { ref: refOf(s.text, "button", "Save card") });
    expect(await textOf(page, "#log")).toBe("saved");
    await page.close();
  });

  test("1,000-row table: ≤ 60,000 chars, one line per row, every Edit button and link addressable", async () => {
    const page = await open(env, "table.html?rows=1000");
    const s = await ok(page, "snapshot", {});
    expect(s.text.length).toBeLessThanOrEqual(60_000);
    const rows = s.text.split("\n").filter((l: string) => l.startsWith("  row: "));
    expect(rows.length).toBe(1001); // header + 1,000
    const refs = allRefs(s.text);
    expect(new Set(refs).size).toBe(2000);
    // Every ref is the Edit button / Profile link of exactly its row.
    const check = await page.evaluate(async (lines: string[]) => {
      const bad: string[] = [];
      for (let i = 1; i < lines.length; i++) {
        const m = [...(lines[i] as string).matchAll(/\[([a-gi-z]+\d+)\]/g)].map((x) => x[1]);
        if (m.length !== 2) bad.push(`row ${i}: ${lines[i]}`);
        const [edit, link] = await Promise.all(m.map((ref) => (globalThis as any).__torii.call("getState", { ref, origin: self.origin })));
        if (edit.value.role !== "button" || edit.value.name !== "Edit") bad.push(`edit ${i}`);
        if (link.value.role !== "link" || link.value.href !== location.href.split("#")[0].replace(/\?.*$/, "") + location.search + `#/customer/${i - 1}`) bad.push(`link ${i} ${link.value.href}`);
      }
      return bad;
    }, rows);
    expect(check).toEqual([]);
    // domClick on row 500's Edit ref clicks exactly that button.
    const row500 = rows[501] as string;
    const editRef = allRefs(row500)[0] as string;
    await ok(page, "domClick", { ref: editRef });
    expect(await textOf(page, "#status")).toBe("editing row 500");
    await page.close();
  });

  test("pagination: whole lines, ≤ maxChars, pages cover the outline; a page never opens on a ditto row", async () => {
    const page = await open(env, "table.html?rows=300");
    const full = await ok(page, "snapshot", {});
    const pages: string[] = [];
    let r = await ok(page, "snapshot", { maxChars: 2000 });
    pages.push(r.text);
    while (r.nextCursor) {
      r = await ok(page, "snapshot", { cursor: r.nextCursor, maxChars: 2000 });
      pages.push(r.text);
    }
    expect(pages.length).toBeGreaterThan(5);
    const fullLines = full.text.split("\n");
    const got = pages.flatMap((p) => p.split("\n"));
    expect(got.length).toBe(fullLines.length);
    for (const p of pages) {
      expect(p.length).toBeLessThanOrEqual(2000);
      // First row of a page names its controls in full.
      const first = p.split("\n")[0] as string;
      if (first.includes("row:") && /\[[a-gi-z]+\d+\]/.test(first)) expect(first).toContain('button "Edit"');
    }
    expect(new Set(got.flatMap(allRefs))).toEqual(new Set(allRefs(full.text)));
    const bad = await call(page, "snapshot", { cursor: "zz.3" });
    expect(bad.ok ? "" : bad.error.code).toBe("invalid_argument");
    await page.close();
  });

  test("interactive mode: ref lines and their headings only", async () => {
    const page = await open(env, "form.html");
    const s = await ok(page, "snapshot", { interactive: true });
    const lines = s.text.split("\n");
    for (const l of lines) expect(l).toMatch(/\[[a-gi-z]+\d+\]|^heading /);
    expect(lines[0]).toBe('heading "Create account" [level=1]');
    expect(lines.length).toBe(24);
    await page.close();
  });

  test("subtree by selector and by ref", async () => {
    const page = await open(env, "form.html");
    const s = await ok(page, "snapshot", { root: "fieldset" });
    expect(s.text.split("\n")[0]).toBe('group "Plan":');
    expect(s.text).not.toContain("Email");
    const all = await ok(page, "snapshot", {});
    const r = await ok(page, "snapshot", { root: refOf(all.text, "checkbox", "Remember me") });
    expect(r.text).toMatch(/^checkbox "Remember me" \[[a-gi-z]+\d+\] \[checked\]$/);
    const miss = await call(page, "snapshot", { root: "#nope" });
    expect(miss.ok ? "" : miss.error.code).toBe("not_found");
    await page.close();
  });

  test("diff: exactly the changed line after a DOM change; full outline with a note the first time", async () => {
    const page = await open(env, "form.html");
    const first = await ok(page, "snapshot", { diff: true });
    expect(first.note).toMatch(/no previous snapshot/);
    expect(first.text).toContain('\nbutton "Create account"');
    const ref = refOf(first.text, "checkbox", "Send me news");
    await page.click("#news");
    await page.evaluate(() => document.querySelector("h1")!.insertAdjacentHTML("afterend", "<h2>Step 2</h2>"));
    const d = await ok(page, "snapshot", { diff: true });
    expect(d.diff).toEqual({ added: 2, removed: 1 });
    expect(d.text.split("\n")).toEqual([
      '+ heading "Step 2" [level=2]',
      `- checkbox "Send me news" [${ref}]`,
      `+ checkbox "Send me news" [${ref}] [checked] [focused]`,
    ]);
    const none = await ok(page, "snapshot", { diff: true });
    expect(none.text).toBe("");
    expect(none.note).toMatch(/no changes/);
    await page.close();
  });

  test("diff inside a table names the row's controls in full", async () => {
    const page = await open(env, "table.html?rows=20");
    const s = await ok(page, "snapshot", {});
    await page.evaluate(() => { document.querySelector('tr[data-i="5"] td')!.textContent = "Renamed"; });
    const d = await ok(page, "snapshot", { diff: true });
    const lines = d.text.split("\n");
    expect(lines[0]).toBe('  table "Customers":');
    expect(lines[1]).toMatch(/^- {3}row: Fatima \| 185 \| Lisbon \| button "Edit" \[[a-gi-z]+\d+\] \| link "Profile" \[[a-gi-z]+\d+\]$/);
    expect(lines[2]).toMatch(/^\+ {3}row: Renamed \| 185 \| Lisbon \| button "Edit"/);
    expect(allRefs(lines[2] as string)).toEqual(allRefs(lines[1] as string));
    expect(allRefs(s.text)).toContain(allRefs(lines[2] as string)[0]);
    await page.close();
  });
});

describe("refs fail closed", () => {
  test("a ref survives a re-snapshot; the document keeps its first tag and counts from 1; never reissued", async () => {
    const page = await open(env, "form.html");
    const a = await ok(page, "snapshot", { refTag: "qa" });
    const refs = allRefs(a.text);
    expect(refs[0]).toBe("qa1");
    expect(refs).toEqual(refs.map((_, i) => `qa${i + 1}`));
    const email = refOf(a.text, "textbox", "Email");
    await page.evaluate(() => document.querySelector("form")!.insertAdjacentHTML("afterbegin", '<button type="button">Late</button>'));
    // A later call offers another tag: the document keeps its own and the next number.
    const b = await call<any>(page, "snapshot", { refTag: "qb" });
    if (!b.ok) throw new Error("snapshot");
    expect(b.refTag).toBe("qa");
    expect(refOf(b.value.text, "textbox", "Email")).toBe(email);
    expect(refOf(b.value.text, "button", "Late")).toBe(`qa${refs.length + 1}`);
    // Removing an element never frees its number.
    await page.evaluate(() => document.querySelector("button")!.remove());
    await page.evaluate(() => document.querySelector("form")!.insertAdjacentHTML("afterbegin", '<button type="button">Later</button>'));
    const c = await ok(page, "snapshot", {});
    expect(refOf(c.text, "button", "Later")).toBe(`qa${refs.length + 2}`);
    expect(allRefs(c.text)).not.toContain(`qa${refs.length + 1}`);
    await page.close();
  });

  test("a document offered no tag issues no ref (it never guesses one)", async () => {
    const page = await open(env, "form.html");
    const r = await call(page, "snapshot", { refTag: undefined });
    expect(r.ok ? "" : r.error.code).toBe("invalid_argument");
    expect(r.refTag).toBeUndefined();
    // The next call with an offer works and takes that tag.
    const s = await call<any>(page, "snapshot", { refTag: "qc" });
    expect(s.ok && s.refTag).toBe("qc");
    await page.close();
  });

  test("removed element → stale_ref, never another element", async () => {
    const page = await open(env, "form.html");
    const s = await ok(page, "snapshot", {});
    const ref = refOf(s.text, "button", "Create account");
    await page.evaluate(() => {
      const b = document.querySelector('button[type="submit"]')!;
      b.remove();
      document.querySelector("form")!.insertAdjacentHTML("beforeend", '<button type="submit">Create account</button>');
    });
    for (const m of ["domClick", "getState", "point", "fill"]) {
      const r = await call(page, m, { ref, value: "x" });
      expect(r.ok ? "" : r.error.code, m).toBe("stale_ref");
    }
    const bad = await call(page, "getState", { ref: "button" });
    expect(bad.ok ? "" : bad.error.code).toBe("invalid_argument");
    await page.close();
  });

  test("a ref from a navigated document → stale_ref; new document, new docId", async () => {
    const page = await open(env, "form.html");
    const s = await call<any>(page, "snapshot", {});
    if (!s.ok) throw new Error("snapshot");
    const ref = refOf(s.value.text, "button", "Create account");
    await page.reload();
    await inject(page, env.code);
    const r = await call(page, "domClick", { ref, docId: s.docId });
    expect(r.ok ? "" : r.error.code).toBe("stale_ref");
    expect(r.docId).not.toBe(s.docId);
    // Even without the docId check the new document's engine does not know the ref.
    const r2 = await call(page, "domClick", { ref });
    expect(r2.ok ? "" : r2.error.code).toBe("stale_ref");
    expect(await textOf(page, "#out")).toBe("");
    await page.close();
  });

  test("injection is idempotent: a second page.js keeps docId and refs", async () => {
    const page = await open(env, "form.html");
    const s = await call<any>(page, "snapshot", {});
    if (!s.ok) throw new Error("snapshot");
    await inject(page, env.code);
    const ref = refOf(s.value.text, "button", "Create account");
    const r = await call<any>(page, "getState", { ref });
    expect(r.docId).toBe(s.docId);
    expect(r.ok && r.value.name).toBe("Create account");
    await page.close();
  });
});

describe("actions", () => {
  test("fill sets a React-style controlled input's state (native setter + input/change)", async () => {
    const page = await open(env, "controlled.html");
    // The fixture really behaves like React: a plain assignment is swallowed.
    await page.evaluate(() => {
      const el = document.getElementById("name") as HTMLInputElement;
      el.value = "plain";
      el.dispatchEvent(new Event("input", { bubbles: true }));
    });
    expect(await textOf(page, "#state-name")).toBe('""');
    const s = await ok(page, "snapshot", {});
    const r = await ok(page, "fill", { ref: refOf(s.text, "textbox", "Display name"), value: "Ada Lovelace" });
    expect(r).toMatchObject({ mode: "set", applied: true });
    expect(await textOf(page, "#state-name")).toBe('"Ada Lovelace"');
    await ok(page, "fill", { ref: refOf(s.text, "textbox", "About"), value: "line 1\nline 2" });
    expect(await textOf(page, "#state-about")).toBe('"line 1\\nline 2"');
    await ok(page, "fill", { ref: refOf(s.text, "textbox", "Display name"), value: "Grace", mode: "insertText" });
    expect(await textOf(page, "#state-name")).toBe('"Grace"');
    await page.close();
  });

  test("fill on a contenteditable editor goes through insertText", async () => {
    const page = await open(env, "editor.html");
    const s = await ok(page, "snapshot", {});
    const ref = refOf(s.text, "textbox", "Note body");
    const r = await ok(page, "fill", { ref, value: "Brand new text" });
    expect(r).toMatchObject({ mode: "insertText", applied: true });
    expect(await page.evaluate(() => (document.getElementById("editor") as HTMLElement).innerText.trim())).toBe("Brand new text");
    expect(await textOf(page, "#events")).toMatch(/insertText/);
    const bad = await call(page, "fill", { ref: refOf(s.text, "button", "Bold"), value: "x" });
    expect(bad.ok ? "" : bad.error.code).toBe("not_editable");
    await page.close();
  });

  test("selectOption by value, label, index, and several on a multi-select", async () => {
    const page = await open(env, "form.html");
    const s = await ok(page, "snapshot", {});
    const country = refOf(s.text, "combobox", "Country");
    const toppings = refOf(s.text, "listbox", "Toppings");
    expect(await ok(page, "selectOption", { ref: country, values: ["de"] })).toEqual({ selected: ["Germany"] });
    expect(await ok(page, "selectOption", { ref: country, labels: ["japan"] })).toEqual({ selected: ["Japan"] });
    expect(await ok(page, "selectOption", { ref: country, indexes: [1] })).toEqual({ selected: ["France"] });
    expect(await ok(page, "selectOption", { ref: toppings, values: ["cheese"], labels: ["Olives"] })).toEqual({ selected: ["Cheese", "Olives"] });
    expect(await textOf(page, "#changes")).toBe("country=de country=jp country=fr toppings=cheese,olives");
    const miss = await call(page, "selectOption", { ref: country, labels: ["Atlantis"] });
    expect(miss.ok ? "" : miss.error.code).toBe("not_found");
    expect(miss.ok ? "" : miss.error.message).toContain('"Germany"');
    const two = await call(page, "selectOption", { ref: country, values: ["fr", "de"] });
    expect(two.ok ? "" : two.error.code).toBe("invalid_argument");
    const dis = await call(page, "selectOption", { ref: toppings, values: ["basil"] });
    expect(dis.ok ? "" : dis.error.code).toBe("disabled");
    const after = await ok(page, "snapshot", {});
    expect(after.text).toContain(`combobox "Country" [${country}]: France`);
    expect(after.text).toContain(`listbox "Toppings" [${toppings}] [multiple]: Cheese, Olives`);
    await page.close();
  });

  test("point reports the covering overlay with a ref; uncovered after the overlay is gone", async () => {
    const page = await open(env, "overlay.html");
    const s = await ok(page, "snapshot", {});
    const buy = refOf(s.text, "button", "Buy");
    const p = await ok(page, "point", { ref: buy });
    expect(p.covered).toBeTruthy();
    expect(p.covered.tag).toBe("div");
    const cov = await ok(page, "getState", { ref: p.covered.ref });
    expect(cov.box.w).toBeGreaterThanOrEqual(999); // the full-viewport overlay
    const free = await ok(page, "point", { ref: refOf(s.text, "button", "Free corner") });
    expect(free.covered).toBeUndefined();
    // A real click at the reported point lands on the overlay, not on Buy.
    await page.mouse.click(p.x, p.y);
    expect(await textOf(page, "#r")).toBe("");
    await ok(page, "domClick", { ref: refOf(s.text, "button", "Accept") });
    const p2 = await ok(page, "point", { ref: buy });
    expect(p2.covered).toBeUndefined();
    await page.mouse.click(p2.x, p2.y);
    expect(await textOf(page, "#r")).toBe("bought");
    const gone = await call(page, "point", { ref: p.covered.ref });
    expect(gone.ok ? "" : gone.error.code).toBe("stale_ref");
    await page.close();
  });

  test("point scrolls an off-screen element into view and gives a clickable point", async () => {
    const page = await open(env, "table.html?rows=200");
    const s = await ok(page, "snapshot", {});
    const rows = s.text.split("\n").filter((l: string) => l.includes("row:"));
    const ref = allRefs(rows[180] as string)[0] as string;
    const before = await ok(page, "getState", { ref });
    expect(before.inViewport).toBe(false);
    const p = await ok(page, "point", { ref });
    expect(p.scrolled).toBe(true);
    await page.mouse.click(p.x, p.y);
    expect(await textOf(page, "#status")).toBe("editing row 179");
    await page.close();
  });

  test("scroll to bottom/top and by delta reports atBottom", async () => {
    const page = await open(env, "table.html?rows=200");
    const b = await ok(page, "scroll", { to: "bottom" });
    expect(b.atBottom).toBe(true);
    expect(b.scrollY).toBeGreaterThan(1000);
    const t = await ok(page, "scroll", { to: "top" });
    expect([t.scrollY, t.atTop, t.atBottom]).toEqual([0, true, false]);
    const d = await ok(page, "scroll", { dy: 300 });
    expect(d.scrollY).toBe(300);
    await page.close();
  });

  test("reveal scrolls the virtual list until the item exists, then its ref clicks it", async () => {
    const page = await open(env, "virtual-list.html");
    const r = await ok(page, "reveal", { role: "button", name: "Message 700" });
    expect(r.found).toBe(true);
    expect(r.matches[0].line).toMatch(/^button "Message 700" \[[a-gi-z]+\d+\]$/);
    expect(r.matches[0].exact).toBe(true);
    await ok(page, "domClick", { ref: r.matches[0].ref });
    expect(await textOf(page, "#opened")).toBe("opened 700");
    // Already past it: wraps to the top to find an earlier one.
    const back = await ok(page, "reveal", { role: "button", name: "Message 3" });
    expect(back.found && back.matches[0].line).toMatch(/"Message 3"/);
    const none = await ok(page, "reveal", { role: "button", name: "Message 20001", maxScrolls: 5 });
    expect(none.found).toBe(false);
    // Stopped at its cap, short of the end: it says so, and how far it got.
    expect(none).toMatchObject({ capped: true, scrolls: 5 });
    expect(none.scrollY).toBeLessThan(none.scrollHeight);
    await page.close();
  });

  test("reveal's container: a ref or a CSS selector; a bad or unmatched selector names container", async () => {
    const page = await open(env, "virtual-list.html");
    const r = await ok(page, "reveal", { role: "button", name: "Message 500", container: "#viewport" });
    expect(r.found && r.matches[0].line).toMatch(/"Message 500"/);
    const bad = await call(page, "reveal", { role: "button", name: "Message 1", container: "#viewport[" });
    expect(bad.ok ? "" : `${bad.error.code}: ${bad.error.message}`).toMatch(/^invalid_argument: container/);
    const none = await call(page, "reveal", { role: "button", name: "Message 1", container: "#no-such-list" });
    expect(none.ok ? "" : `${none.error.code}: ${none.error.message}`).toMatch(/^not_found: container/);
    await page.close();
  });
});

describe("find, get_state, read_text", () => {
  test("find: exact matches first, then substrings; text finds the row", async () => {
    const page = await open(env, "form.html");
    const f = await ok(page, "find", { name: "account" });
    // No exact match: substrings in document order; every match has a ref, a heading too.
    expect(f.matches.map((m: any) => m.line)).toEqual([
      expect.stringMatching(/^heading "Create account" \[[a-gi-z]+\d+\] \[level=1\]$/),
      expect.stringMatching(/^textbox "Account id" \[[a-gi-z]+\d+\] \[readonly\]$/),
      expect.stringMatching(/^button "Create account" \[[a-gi-z]+\d+\]$/),
    ]);
    // The exact match comes first even though the substring match is earlier in the page.
    const plan = await ok(page, "find", { name: "plan" });
    expect(plan.matches.map((m: any) => [m.line, m.exact])).toEqual([
      [expect.stringMatching(/^group "Plan" \[[a-gi-z]+\d+\]$/), true],
      [expect.stringMatching(/^link "Plan details" \[[a-gi-z]+\d+\]$/), false],
    ]);
    const ex = await ok(page, "find", { role: "button", name: "create account" });
    expect(ex.matches.length).toBe(1);
    expect(ex.matches[0].exact).toBe(true);
    const t = await open(env, "table.html?rows=50");
    const byText = await ok(t, "find", { text: "Fatima" });
    expect(byText.matches[0].line).toMatch(/^row \[[a-gi-z]+\d+\]: Fatima \| 185 \| Lisbon \| button "Edit" \[[a-gi-z]+\d+\] \| link "Profile" \[[a-gi-z]+\d+\]$/);
    const lim = await ok(t, "find", { role: "button", name: "Edit", limit: 5 });
    expect([lim.matches.length, lim.total]).toEqual([5, 50]);
    const none = await call(t, "find", {});
    expect(none.ok ? "" : none.error.code).toBe("invalid_argument");
    await page.close();
    await t.close();
  });

  test("getState: exists/visible/enabled/checked/box/focus, and exists:false for a selector with no match", async () => {
    const page = await open(env, "form.html");
    const s = await ok(page, "snapshot", {});
    const st = await ok(page, "getState", { ref: refOf(s.text, "checkbox", "Remember me") });
    expect(st).toMatchObject({ exists: true, visible: true, enabled: true, checked: true, role: "checkbox", tag: "input", editable: false, isPassword: false });
    expect(st.box.w).toBeGreaterThan(0);
    const del = await ok(page, "getState", { ref: refOf(s.text, "button", "Delete") });
    expect(del.enabled).toBe(false);
    await page.focus("#email");
    const em = await ok(page, "getState", { selector: "#email" });
    expect(em).toMatchObject({ focused: true, editable: true, name: "Email" });
    expect(await ok(page, "getState", { selector: "#missing" })).toMatchObject({ exists: false });
    const bad = await call(page, "getState", { selector: "##" });
    expect(bad.ok ? "" : bad.error.code).toBe("invalid_argument");
    const dc = await call(page, "domClick", { ref: refOf(s.text, "button", "Delete") });
    expect(dc.ok ? "" : dc.error.code).toBe("disabled");
    await page.close();
  });

  test("readText: pages in code points never split a surrogate pair and concatenate to the whole", async () => {
    const page = await open(env, "article.html");
    const whole = await ok(page, "readText", {});
    expect(whole.text).toContain("A long article 📚");
    expect(whole.text).toContain("Last line 🏁");
    expect(whole.text).not.toContain("Hidden paragraph");
    expect(whole.text).toContain("cell 1\tcell 2 😀");
    expect(whole.total).toBe([...whole.text].length);
    for (const size of [1, 7, 50, 333]) {
      let offset = 0;
      let acc = "";
      let n = 0;
      for (;;) {
        const p = await ok(page, "readText", { offset, maxChars: size });
        expect([...p.text].length).toBeLessThanOrEqual(size);
        const firstUnit = p.text.charCodeAt(0);
        const lastUnit = p.text.charCodeAt(p.text.length - 1);
        expect(firstUnit >= 0xdc00 && firstUnit <= 0xdfff).toBe(false);
        expect(lastUnit >= 0xd800 && lastUnit <= 0xdbff).toBe(false);
        acc += p.text;
        n++;
        if (p.nextOffset === undefined) break;
        offset = p.nextOffset;
        if (size === 1 && n > 200) break; // enough single code points
      }
      if (size === 1) expect(acc).toBe([...whole.text].slice(0, 201).join(""));
      else expect(acc).toBe(whole.text);
    }
    await page.close();
  });

  test("readText includes open shadow roots in reading order", async () => {
    const page = await open(env, "shadow.html");
    const t = await ok(page, "readText", {});
    const order = ["Components", "Billing", "Slotted paragraph", "Slotted action", "Save card", "Card holder", "Nested panel", "Inner link"];
    let last = -1;
    for (const o of order) {
      const i = t.text.indexOf(o);
      expect(i, o).toBeGreaterThan(last);
      last = i;
    }
    expect(t.text).not.toContain("Hidden in shadow");
    await page.close();
  });
});

describe("frames", () => {
  test("same-origin iframe inline with refs; cross-origin iframe as a placeholder the worker can fill", async () => {
    const page = await open(env, `iframes.html?x=${env.portB}`, { inject: false });
    await page.waitForFunction(() => (document.getElementById("cross") as HTMLIFrameElement).src !== "");
    const cross = await (await page.waitForSelector("#cross")).contentFrame();
    await cross!.waitForSelector("#pay");
    await inject(page, env.code);
    const s = await ok(page, "snapshot", {});
    expect(s.text).toMatch(/iframe "Same origin":\n  heading "Payment" \[level=2\]\n  textbox "Card number" \[[a-gi-z]+\d+\]\n  button "Pay now" \[[a-gi-z]+\d+\]/);
    expect(s.frames).toHaveLength(1);
    const f = s.frames[0];
    expect(f).toMatchObject({ frame: 0, origin: env.originB, title: "Cross origin", depth: 0, windowIndex: 1 });
    expect(s.text.split("\n")[f.line]).toBe(`iframe "Cross origin" [frame=0] (${env.originB})`);
    // Same-origin iframe content is actionable from the top engine.
    await ok(page, "domClick", { ref: refOf(s.text, "button", "Pay now") });
    expect(await page.frameLocator("#same").locator("#paid").textContent()).toBe("paid");
    // point() of an element inside the same-origin iframe is in top-viewport coordinates.
    const p = await ok(page, "point", { ref: refOf(s.text, "textbox", "Card number") });
    const box = await page.frameLocator("#same").locator("#card").boundingBox();
    expect(Math.abs(p.x - (box!.x + box!.width / 2))).toBeLessThan(2);
    expect(Math.abs(p.y - (box!.y + box!.height / 2))).toBeLessThan(2);
    // The worker snapshots the cross-origin frame with its own engine, under its own tag: the
    // parent's refs mean nothing there, the child's nothing in the parent.
    await inject(page, env.code, cross!);
    const child = await call<any>(cross!, "snapshot", {});
    if (!child.ok) throw new Error("child snapshot");
    const top = await call<any>(page, "snapshot", {});
    expect(child.refTag).not.toBe(top.refTag);
    const childRef = allRefs(child.value.text)[0] as string;
    expect(childRef.startsWith(child.refTag)).toBe(true);
    const inTop = await call(page, "getState", { ref: childRef });
    expect(inTop.ok ? "" : inTop.error.code).toBe("stale_ref");
    const inChild = await call(cross!, "getState", { ref: refOf(s.text, "button", "Pay now") });
    expect(inChild.ok ? "" : inChild.error.code).toBe("stale_ref");
    const fr = await ok(page, "frameRect", { frame: 0 });
    const cb = await page.locator("#cross").boundingBox();
    expect(Math.abs(fr.x - cb!.x)).toBeLessThan(3);
    // A same-origin iframe that navigates makes its old refs stale.
    const cardRef = refOf(s.text, "textbox", "Card number");
    await page.evaluate(() => { (document.getElementById("same") as HTMLIFrameElement).src = "form.html"; });
    await page.frameLocator("#same").locator("#email").waitFor();
    const st = await call(page, "getState", { ref: cardRef });
    expect(st.ok ? "" : st.error.code).toBe("stale_ref");
    await page.close();
  });
});

describe("security: the engine runs only in the origin the worker allowed", () => {
  /** A button whose click the page records, so a refused call can be seen to have done nothing. */
  const BUTTON = `<button id="go" onclick="document.title='clicked'">Go</button><p>secret-${"marker"}</p>`;

  test("a call naming another origin, or none, is refused before anything runs; the reply names the document's own", async () => {
    const page = await open(env, "actions.html");
    await page.evaluate((html) => document.body.insertAdjacentHTML("beforeend", html), BUTTON);
    for (const args of [{ origin: env.originB }, { origin: "null" }, { origin: undefined }, { origin: "" }]) {
      for (const [m, a] of [["snapshot", {}], ["readText", {}], ["domClick", { selector: "#go" }], ["fill", { selector: "#a", value: "x" }]] as const) {
        const r = await call(page, m, { ...a, ...args });
        expect(r.ok ? "ran" : r.error.code, `${m} ${JSON.stringify(args)}`).toBe("origin_not_allowed");
        expect(JSON.stringify(r)).not.toContain("secret-marker");
        expect(r.origin).toBe(env.origin);
      }
    }
    expect(await page.title()).not.toBe("clicked");
    expect(await page.inputValue("#a")).toBe("");
    const ran = await call(page, "domClick", { selector: "#go" });
    expect(ran.ok).toBe(true);
    expect(ran.origin).toBe(env.origin);
    expect(ran.url).toBe(page.url());
    expect(await page.title()).toBe("clicked");
    await page.close();
  });

  test("a blank frame and a popup written by another origin answer with that origin, not their parent's or opener's", async () => {
    // Origin B's page, framed in A's: B creates a blank iframe and a blank popup and writes into both.
    const page = await open(env, `iframes.html?x=${env.portB}`, { inject: false });
    const cross = await (await page.waitForSelector("#cross")).contentFrame();
    await cross!.waitForSelector("#pay");
    const popupSeen = page.context().waitForEvent("page");
    await cross!.evaluate((html) => {
      const f = document.createElement("iframe");
      document.body.append(f);
      f.contentDocument!.body.innerHTML = html;
      const w = window.open("about:blank", "_blank")!;
      w.document.body.innerHTML = html;
    }, BUTTON);
    const popup = await popupSeen;
    const blank = cross!.childFrames()[0]!;
    for (const frame of [blank, popup.mainFrame()]) {
      await inject(page, env.code, frame);
      const asA = await call(frame, "snapshot", { origin: env.origin });
      expect(asA.ok ? "ran" : asA.error.code).toBe("origin_not_allowed");
      expect(asA.origin).toBe(env.originB);
      expect(JSON.stringify(asA)).not.toContain("secret-marker");
      const click = await call(frame, "domClick", { selector: "#go", origin: env.origin });
      expect(click.ok).toBe(false);
      expect(await frame.evaluate(() => document.title)).not.toBe("clicked");
    }
    await popup.close();
    await page.close();
  });

  test("an opaque document (sandboxed srcdoc) never runs, whatever origin the call names", async () => {
    const page = await open(env, "actions.html", { inject: false });
    await page.evaluate((html) => {
      const f = document.createElement("iframe");
      f.setAttribute("sandbox", "allow-scripts");
      f.srcdoc = html;
      document.body.append(f);
    }, BUTTON);
    const frame = await (await page.waitForSelector("iframe[sandbox]")).contentFrame();
    await frame!.waitForSelector("#go");
    await inject(page, env.code, frame!);
    for (const origin of [env.origin, "null"]) {
      const r = await call(frame!, "snapshot", { origin });
      expect(r.ok ? "ran" : r.error.code).toBe("origin_not_allowed");
      expect(r.origin).toBe("null");
    }
    await page.close();
  });
});

describe("waits", () => {
  test("waitFor appear / disappear / timeout; settle", async () => {
    const page = await open(env, "form.html");
    await page.evaluate(() => setTimeout(() => document.body.insertAdjacentHTML("beforeend", '<div id="late">Loaded later</div>'), 300));
    const a = await ok(page, "waitFor", { selector: "#late", timeoutMs: 5000 });
    expect(a.found).toBe(true);
    expect(a.ms).toBeGreaterThanOrEqual(250);
    const t = await ok(page, "waitFor", { text: "loaded LATER", timeoutMs: 1000 });
    expect(t.found).toBe(true);
    await page.evaluate(() => setTimeout(() => document.getElementById("late")!.remove(), 200));
    const d = await ok(page, "waitFor", { selector: "#late", state: "disappear", timeoutMs: 5000 });
    expect(d.found).toBe(true);
    const to = await ok(page, "waitFor", { text: "never there", timeoutMs: 300 });
    expect(to.found).toBe(false);
    expect(to.ms).toBeGreaterThanOrEqual(290);
    expect(to.ms).toBeLessThan(1500);
    const s = await ok(page, "snapshot", {});
    const ref = refOf(s.text, "button", "Create account");
    await page.evaluate(() => setTimeout(() => document.querySelector('button[type="submit"]')!.remove(), 100));
    expect((await ok(page, "waitFor", { ref, state: "disappear", timeoutMs: 3000 })).found).toBe(true);
    await page.evaluate(() => { let n = 0; const i = setInterval(() => { document.title = "t" + n++; if (n > 5) clearInterval(i); }, 50); });
    const st = await ok(page, "settle", { quietMs: 200, timeoutMs: 5000 });
    expect(st.settled).toBe(true);
    expect(st.ms).toBeGreaterThanOrEqual(400);
    const bad = await call(page, "waitFor", { selector: "#x", timeoutMs: 60_000, state: "sideways" });
    expect(bad.ok ? "" : bad.error.code).toBe("invalid_argument");
    await page.close();
  });
});

describe("security: an input's value never leaves the page", () => {
  test("a secret typed into password and text fields appears in no snapshot/find/getState/readText output", async () => {
    const page = await open(env, "form.html");
    const SECRET = "S3cr3t-Sentinel-7f2a";
    const TYPED = "typed-email-sentinel@example.test";
    const s = await ok(page, "snapshot", {});
    const pw = refOf(s.text, "textbox", "Password");
    const email = refOf(s.text, "textbox", "Email");
    expect((await ok(page, "fill", { ref: pw, value: SECRET })).applied).toBe(true);
    expect((await ok(page, "fill", { ref: email, value: TYPED })).applied).toBe(true);
    await page.fill("#bio", SECRET);
    await page.fill("#fullname", SECRET);
    const outputs: unknown[] = [];
    for (const [m, a] of [
      ["snapshot", {}], ["snapshot", { diff: true }], ["snapshot", { interactive: true }], ["snapshot", { root: "form" }],
      ["find", { role: "textbox" }], ["find", { text: "S3cr3t" }], ["find", { name: "Sentinel" }], ["find", { text: "typed-email" }],
      ["getState", { ref: pw }], ["getState", { ref: email }], ["getState", { selector: "#bio" }], ["readText", {}],
      ["point", { ref: pw }], ["fill", { ref: pw, value: SECRET }], ["fill", { ref: pw, value: SECRET, mode: "insertText" }],
      ["waitFor", { text: SECRET, timeoutMs: 100 }],
    ] as const) {
      outputs.push(await call(page, m, a));
    }
    const all = JSON.stringify(outputs);
    expect(all).not.toContain("S3cr3t");
    expect(all).not.toContain("typed-email");
    expect(all).toContain("[password]");
    // The secret really is in the field (the test would catch a leak).
    expect(await page.inputValue("#password")).toBe(SECRET);
    await page.close();
  });
});

describe("risk: what acting on a target causes (one rule with the effect guard)", () => {
  test("a submit button, a field of a form, a destructive mark, a link elsewhere, a shadow host's password field", async () => {
    const page = await open(env, "form.html");
    await page.evaluate(() => {
      document.getElementById("custom")!.setAttribute("data-destructive", "");
      const a = document.createElement("a");
      a.id = "away";
      a.href = "https://elsewhere.example/x";
      a.textContent = "Elsewhere";
      document.body.appendChild(a);
      const host = document.createElement("div");
      host.id = "pwhost";
      host.style.cssText = "display:block;width:200px;height:30px";
      document.body.appendChild(host);
      host.attachShadow({ mode: "open" }).innerHTML = '<input type="password" style="width:200px;height:30px">';
    });
    const submit = await ok(page, "risk", { selector: "#f button[type=submit]" });
    expect(submit).toMatchObject({ submit: true, destructive: false, space: { submit: true }, enter: { submit: true } });
    const field = await ok(page, "risk", { selector: "#f input:not([type=password])" });
    expect(field).toMatchObject({ submit: false, isPassword: false, enter: { submit: true }, space: { submit: false } });
    const custom = await ok(page, "risk", { selector: "#custom" });
    expect(custom).toMatchObject({ destructive: true, space: { destructive: true } });
    const away = await ok(page, "risk", { selector: "#away" });
    expect(away.href).toBe("https://elsewhere.example/x");
    expect(away.enter.href).toBe("https://elsewhere.example/x");
    const host = await ok(page, "risk", { selector: "#pwhost" });
    expect(host.isPassword).toBe(true);
    await page.close();
  });
});

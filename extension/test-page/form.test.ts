// fill_form's page side (page/form.ts) in a real Chromium: every kind of field filled in one call;
// any bad field leaves the whole form untouched (no event reached the page).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Page } from "playwright-core";
import { call, ok, open, setup, type Env } from "./harness";

let env: Env;
beforeAll(async () => {
  env = await setup();
}, 60_000);
afterAll(async () => {
  await env?.close();
});

const ALL = [
  { selector: "#name", value: "Ada Lovelace" },
  { selector: "#email", value: "ada@example.test" },
  { selector: "#password", value: "s3cret" },
  { selector: "#age", value: "36" },
  { selector: "#birthday", value: "1815-12-10" },
  { selector: "#about", value: "Line 1\nLine 2" },
  { selector: "#country", value: "Japan" },
  { selector: "#langs", value: ["en", "French"] },
  { selector: "#terms", value: true },
  { selector: "#news", value: false },
  { selector: "#pro", value: true },
  { selector: "#volume", value: "7" },
  { selector: "#colour", value: "#336699" },
  { selector: "#bio", value: "Analyst" },
];
const indexed = (fields: object[]) => fields.map((f, i) => ({ i, ...f }));

async function state(page: Page) {
  return page.evaluate(() => {
    const v = (id: string) => (document.getElementById(id) as HTMLInputElement).value;
    const c = (id: string) => (document.getElementById(id) as HTMLInputElement).checked;
    const langs = Array.from((document.getElementById("langs") as HTMLSelectElement).selectedOptions).map((o) => o.value);
    return {
      values: ["name", "email", "password", "age", "birthday", "about", "country", "volume", "colour"].map(v),
      langs,
      checked: [c("terms"), c("news"), c("free"), c("pro")],
      bio: (document.getElementById("bio") as HTMLElement).innerText,
      events: (window as unknown as { events: string[] }).events,
      out: document.getElementById("out")?.textContent,
    };
  });
}

describe("fillForm", () => {
  test("14 fields of every kind in one call; nothing submitted", async () => {
    const page = await open(env, "form-all.html");
    const r = await ok(page, "fillForm", { fields: indexed(ALL), apply: true, allowPassword: true });
    expect(r.filled).toHaveLength(14);
    expect(r.filled.every((f: { applied: boolean }) => f.applied)).toBe(true);
    expect(r.filled.map((f: { kind: string }) => f.kind)).toEqual([
      "text", "text", "text", "text", "text", "text", "select", "multiselect", "checkbox", "checkbox", "radio", "value", "value", "editable",
    ]);
    const s = await state(page);
    expect(s.values).toEqual(["Ada Lovelace", "ada@example.test", "s3cret", "36", "1815-12-10", "Line 1\nLine 2", "jp", "7", "#336699"]);
    expect(s.langs).toEqual(["en", "fr"]);
    expect(s.checked).toEqual([true, false, false, true]);
    expect(s.bio).toBe("Analyst");
    expect(s.events.filter((e) => e.startsWith("submit"))).toEqual([]);
    expect(s.out).toBe("");
    // Nothing of a value comes back.
    expect(JSON.stringify(r)).not.toContain("s3cret");
  });

  test("a password field without the permission: nothing filled, its index named", async () => {
    const page = await open(env, "form-all.html");
    const r = await ok(page, "fillForm", { fields: indexed(ALL), apply: true, allowPassword: false });
    expect(r).toEqual({ password: [2] });
    const s = await state(page);
    expect(s.events).toEqual([]);
    expect(s.values[0]).toBe("");
  });

  test("check only (apply:false) touches nothing", async () => {
    const page = await open(env, "form-all.html");
    // It names the password fields and its own origin (the worker judges that origin's switch).
    expect(await ok(page, "fillForm", { fields: indexed(ALL), apply: false, allowPassword: true })).toEqual({ password: [2], origin: env.origin, url: `${env.origin}/form-all.html` });
    expect((await state(page)).events).toEqual([]);
  });

  const BAD: [string, object, string, RegExp][] = [
    ["a boolean for a text field", { selector: "#name", value: true }, "invalid_argument", /fields\.14: value: a boolean, but this <input type=text> takes a string/],
    ["a string for a checkbox", { selector: "#terms", value: "yes" }, "invalid_argument", /fields\.14: .*takes true or false/],
    ["a list for a single select", { selector: "#country", value: ["fr"] }, "invalid_argument", /fields\.14: .*<select> takes one option/],
    ["a string for a multiple select", { selector: "#langs", value: "en" }, "invalid_argument", /fields\.14: .*<select multiple> takes a list/],
    ["an option that does not exist", { selector: "#country", value: "Atlantis" }, "not_found", /fields\.14: no option "Atlantis"; options: .*"France"/],
    ["a disabled option", { selector: "#langs", value: ["qu"] }, "disabled", /fields\.14: option "Quechua" is disabled/],
    ["a number field given words", { selector: "#age", value: "thirty" }, "invalid_argument", /fields\.14: value: the <input type=number> does not take "thirty"/],
    ["a date in another format", { selector: "#birthday", value: "10/12/1815" }, "invalid_argument", /fields\.14: .*<input type=date>/],
    ["a colour in upper case", { selector: "#colour", value: "#FF0000" }, "invalid_argument", /fields\.14: .*<input type=color>/],
    ["a radio set to false", { selector: "#free", value: false }, "invalid_argument", /fields\.14: .*checking another one/],
    ["a read-only field", { selector: "#fixed", value: "x" }, "not_editable", /fields\.14: the field is read-only/],
    ["a file input", { selector: "#avatar", value: "/etc/passwd" }, "not_editable", /fields\.14: a file input takes files: use upload/],
    ["a button", { selector: "#save", value: "x" }, "not_editable", /fields\.14: <button> is not a form field/],
    ["no such element", { selector: "#nope", value: "x" }, "not_found", /fields\.14: no element matches #nope/],
    ["a ref this document never issued", { ref: "e999", value: "x" }, "stale_ref", /fields\.14: ref e999/],
    ["the same element twice", { selector: "#name", value: "again" }, "invalid_argument", /fields\.14: the same element as fields\.0/],
  ];
  test("each bad field, after 14 good ones, fails the whole call with its code and index; nothing touched", async () => {
    // One page for every case: none of them may touch it, so each case also checks the ones before.
    const page = await open(env, "form-all.html");
    for (const [what, bad, code, msg] of BAD) {
      const r = await call(page, "fillForm", { fields: indexed([...ALL, bad]), apply: true, allowPassword: true });
      expect(r.ok, what).toBe(false);
      if (r.ok) return;
      expect(r.error.code, what).toBe(code);
      expect(r.error.message, what).toMatch(msg);
      const s = await state(page);
      expect(s.events, what).toEqual([]);
      expect(s.values, what).toEqual(["", "", "", "", "", "", "", "5", "#000000"]);
      expect(s.checked, what).toEqual([false, true, true, false]);
    }
  });

  test("an empty list is refused", async () => {
    const page = await open(env, "form-all.html");
    const r = await call(page, "fillForm", { fields: [], apply: true, allowPassword: true });
    expect(r.ok ? "" : r.error.code).toBe("invalid_argument");
  });
});

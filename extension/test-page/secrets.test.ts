// The page side of secrets (page/secrets.ts, page/type-secret.ts, page/hold-secret.ts) in a real
// Chromium: a reference becomes its value only in a document of the secret's origins, its guard
// holds it before the value lands (I-76), and no later reply of that document carries the value
// (SECURITY I-69).
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { call, ok, open as openPage, setup, type Env } from "./harness";

let env: Env;
beforeAll(async () => {
  env = await setup();
}, 60_000);
afterAll(async () => {
  await env?.close();
});

const VALUE = "Pg-sentinel-7731";
const bundle = (origin: string) => ({ pw: { v: VALUE, o: [origin] } });

interface Held {
  id: string;
  names: string[];
  origins: string[][];
  /** The element's value when the guard was told: the secret is not in it yet. */
  before: string;
}

/**
 * The guard's hold, as the engine sees it (the real guard is covered in e2e
 * adversarial-secrets-origin): it records what it is told and the field's value at that moment.
 */
async function withGuard(page: Page, extra: "grants" | "none" = "none"): Promise<void> {
  await page.evaluate((grants) => {
    const w = window as unknown as { __holds: unknown[]; __grants: unknown[]; __toriiGuard: unknown };
    w.__holds = [];
    w.__grants = [];
    w.__toriiGuard = {
      holdSecret: (el: Element, names: string[], origins: string[][]) => {
        const before = (el as HTMLInputElement).value ?? el.textContent ?? "";
        w.__holds.push({ id: el.id, names, origins, before });
        return true;
      },
      ...(grants ? { grantSubmit: (token: string, el: Element, origins: string[]) => (w.__grants.push({ token, id: el.id, origins }), true) } : {}),
    };
  }, extra === "grants");
}
const holds = (page: Page) => page.evaluate(() => (window as unknown as { __holds: Held[] }).__holds);

async function open(env: Env, path: string, extra: "grants" | "none" = "none"): Promise<Page> {
  const page = await openPage(env, path);
  await withGuard(page, extra);
  return page;
}

describe("secrets in the page", () => {
  test("fill substitutes on the secret's origin; a wrong origin or an unknown name fills nothing", async () => {
    const page = await open(env, "form-all.html");
    const wrong = await call(page, "fill", { selector: "#name", value: "{{secret:pw}}", secrets: bundle("https://elsewhere.example") });
    expect(!wrong.ok && wrong.error.code).toBe("secret_origin_mismatch");
    const unknown = await call(page, "fill", { selector: "#name", value: "{{secret:other}}", secrets: bundle(env.origin) });
    expect(!unknown.ok && unknown.error.code).toBe("secret_not_found");
    expect(await page.locator("#name").inputValue()).toBe("");
    const r = await ok(page, "fill", { selector: "#password", value: "{{secret:pw}}", mode: "insertText", secrets: bundle(env.origin) });
    // Into a password field through the setter, whatever the mode: no typing events there.
    expect(r).toMatchObject({ mode: "set", applied: true });
    expect(await page.locator("#password").inputValue()).toBe(VALUE);
    expect(JSON.stringify(r)).not.toContain(VALUE);
    // The guard was told before the value landed, and only for the fill that substituted.
    expect(await holds(page)).toEqual([{ id: "password", names: ["pw"], origins: [[env.origin]], before: "" }]);
  });

  test("without a guard that takes the secret, nothing is filled (fill, fillForm, typeSecret)", async () => {
    const page = await openPage(env, "form-all.html");
    const fill = await call(page, "fill", { selector: "#password", value: "{{secret:pw}}", secrets: bundle(env.origin) });
    expect(!fill.ok && fill.error.code).toBe("unknown_method");
    const form = await call(page, "fillForm", { fields: [{ i: 0, selector: "#name", value: "{{secret:pw}}" }], apply: true, allowPassword: false, secrets: bundle(env.origin) });
    expect(!form.ok && form.error.code).toBe("unknown_method");
    await page.locator("#name").focus();
    const typed = await call(page, "typeSecret", { selector: "#name", text: "{{secret:pw}}", secrets: bundle(env.origin) });
    expect(!typed.ok && typed.error.code).toBe("unknown_method");
    // A guard that refuses (the field is not in its document) is the same.
    await page.evaluate(() => ((window as unknown as { __toriiGuard: unknown }).__toriiGuard = { holdSecret: () => false }));
    const refused = await call(page, "fill", { selector: "#password", value: "{{secret:pw}}", secrets: bundle(env.origin) });
    expect(!refused.ok && refused.error.code).toBe("unknown_method");
    expect(await page.locator("#password").inputValue()).toBe("");
    expect(await page.locator("#name").inputValue()).toBe("");
    // A plain value needs no guard.
    await ok(page, "fill", { selector: "#name", value: "Ada" });
  });

  test("an editor holding a secret reads back as its reference (readText, snapshot, find)", async () => {
    const page = await open(env, "form-all.html");
    await ok(page, "fill", { selector: "#bio", value: "bio {{secret:pw}}", secrets: bundle(env.origin) });
    expect(await page.locator("#bio").innerText()).toBe(`bio ${VALUE}`);
    for (const [m, a] of [["readText", {}], ["snapshot", {}], ["find", { text: "bio" }]] as const) {
      const r = await call(page, m, a);
      expect(r.ok).toBe(true);
      expect(JSON.stringify(r), m).not.toContain(VALUE);
    }
    const t = await ok<{ text: string }>(page, "readText", {});
    expect(t.text).toContain("bio {{secret:pw}}");
  });

  test("fillForm: a password field may take a secret of this origin without allowPassword; text around it may not", async () => {
    const page = await open(env, "form-all.html");
    const check = await ok(page, "fillForm", { fields: [{ i: 0, selector: "#password", value: "{{secret:pw}}" }], apply: false, allowPassword: false, secrets: { pw: { v: "", o: [env.origin] } } });
    expect(check.password).toBeUndefined();
    const r = await ok(page, "fillForm", { fields: [{ i: 0, selector: "#password", value: "{{secret:pw}}" }, { i: 1, selector: "#name", value: "Ada" }], apply: true, allowPassword: false, secrets: bundle(env.origin) });
    expect(r.filled).toHaveLength(2);
    expect(await page.locator("#password").inputValue()).toBe(VALUE);
    // Every field of the batch that takes a secret is held before the first value lands.
    expect(await holds(page)).toEqual([{ id: "password", names: ["pw"], origins: [[env.origin]], before: "" }]);
    const mixed = await ok(page, "fillForm", { fields: [{ i: 0, selector: "#password", value: "x{{secret:pw}}" }], apply: false, allowPassword: false, secrets: { pw: { v: "", o: [env.origin] } } });
    expect(mixed.password).toEqual([0]);
    const wrong = await call(page, "fillForm", { fields: [{ i: 0, selector: "#name", value: "{{secret:pw}}" }], apply: true, allowPassword: false, secrets: bundle("https://elsewhere.example") });
    expect(!wrong.ok && wrong.error.code).toBe("secret_origin_mismatch");
    expect(!wrong.ok && wrong.error.message).toContain("fields.0");
  });

  test("typeSecret inserts at the caret of the focused target only", async () => {
    const page = await open(env, "form-all.html");
    const unfocused = await call(page, "typeSecret", { selector: "#name", text: "{{secret:pw}}", secrets: bundle(env.origin) });
    expect(!unfocused.ok && unfocused.error.code).toBe("not_editable");
    expect(await page.locator("#name").inputValue()).toBe("");
    await page.locator("#name").fill("user:");
    await page.locator("#name").focus();
    await ok(page, "typeSecret", { selector: "#name", text: "{{secret:pw}}", secrets: bundle(env.origin) });
    expect(await page.locator("#name").inputValue()).toBe(`user:${VALUE}`);
    expect(await holds(page)).toEqual([{ id: "name", names: ["pw"], origins: [[env.origin]], before: "user:" }]);
    const wrong = await call(page, "typeSecret", { selector: "#name", text: "{{secret:pw}}", secrets: bundle("https://elsewhere.example") });
    expect(!wrong.ok && wrong.error.code).toBe("secret_origin_mismatch");
  });

  test("typeSecret with a submit token grants the guard the Enter only on a password field holding exactly the secret", async () => {
    // The guard's grant, as the engine sees it (the real guard is covered in e2e secrets-submit).
    const page = await open(env, "form-all.html", "grants");
    const grants = () => page.evaluate(() => (window as unknown as { __grants: unknown[] }).__grants);
    await page.locator("#name").focus();
    const text = await ok(page, "typeSecret", { selector: "#name", text: "{{secret:pw}}", secrets: bundle(env.origin), submitKey: "tok" });
    expect(text).toEqual({ typed: true });
    await page.locator("#password").focus();
    const pw = await ok(page, "typeSecret", { selector: "#password", text: "{{secret:pw}}", secrets: bundle(env.origin), submitKey: "tok" });
    expect(pw).toEqual({ typed: true, submitKey: true });
    expect(await grants()).toEqual([{ token: "tok", id: "password", origins: [env.origin] }]);
    // The field now holds more than the one secret: no grant.
    const again = await ok(page, "typeSecret", { selector: "#password", text: "{{secret:pw}}", secrets: bundle(env.origin), submitKey: "tok" });
    expect(again).toEqual({ typed: true });
    expect((await grants()).length).toBe(1);
    expect(JSON.stringify(pw)).not.toContain(VALUE);
  });
});

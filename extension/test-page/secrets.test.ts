// The page side of secrets (page/secrets.ts, page/type-secret.ts) in a real Chromium: a reference
// becomes its value only in a document of the secret's origins, and no later reply of that
// document carries the value (SECURITY I-69).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { call, ok, open, setup, type Env } from "./harness";

let env: Env;
beforeAll(async () => {
  env = await setup();
}, 60_000);
afterAll(async () => {
  await env?.close();
});

const VALUE = "Pg-sentinel-7731";
const bundle = (origin: string) => ({ pw: { v: VALUE, o: [origin] } });

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
    const wrong = await call(page, "typeSecret", { selector: "#name", text: "{{secret:pw}}", secrets: bundle("https://elsewhere.example") });
    expect(!wrong.ok && wrong.error.code).toBe("secret_origin_mismatch");
  });

  test("typeSecret with a submit token grants the guard the Enter only on a password field holding exactly the secret", async () => {
    const page = await open(env, "form-all.html");
    // The guard's grant, as the engine sees it (the real guard is covered in e2e secrets-submit).
    await page.evaluate(() => {
      const w = window as unknown as { __grants: unknown[]; __toriiGuard: unknown };
      w.__grants = [];
      w.__toriiGuard = { grantSubmit: (token: string, el: Element, origins: string[]) => (w.__grants.push({ token, id: el.id, origins }), true) };
    });
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

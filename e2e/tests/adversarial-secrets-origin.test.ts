// Adversarial: a secret goes only to its own origin (SECURITY I-76). The person's secret is bound to
// A; A2 (the rig's B: another port of the same host) is on the allowlist too, and the rig's C is off
// it. Each page puts the secret where a form or a script carries it to A2 or C: a text or password
// field whose form posts (or GETs) there, a submitter's formaction, a form the page re-points once
// the value lands, a form the page submits itself, and scripts that send the value with fetch,
// sendBeacon, an image, a frame, a navigation or a popup. Judged from what reached A2's and C's
// servers and what the agent received; each wait is for the event that would show the failure.
import type { Page } from "playwright-core";
import { beforeAll, beforeEach, expect, it } from "vitest";
import { useAttackRig } from "../src/attack/rig.ts";
import { describeBrowser } from "../src/harness.ts";
import { refOf, type ToolResult } from "../src/mcp.ts";
import { setPolicy } from "../src/safety.ts";
import { pollUntil } from "../src/util.ts";

const SECRET = "S0rigin7Secret4d2b";
const OTHER = "S0therOrigin9c1e";

describeBrowser("adversarial: a secret goes only to its own origin", () => {
  const R = useAttackRig("adv-secret-origin");

  const msg = async (m: Record<string, unknown>) => {
    const r = (await R().ext.evaluate(
      async (x) => (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }).chrome.runtime.sendMessage(x),
      m,
    )) as { ok: boolean };
    if (!r?.ok) throw new Error(`${String(m.type)}: ${JSON.stringify(r)}`);
  };

  beforeAll(async () => {
    await msg({ type: "torii.secrets.add", name: "sopw", kind: "password", value: SECRET, origins: [R().site.origin.a] });
    await msg({ type: "torii.secrets.add", name: "soc", kind: "password", value: OTHER, origins: [R().site.origin.c] });
  });
  beforeEach(async () => {
    // A and A2 allowed, act mode on; C stays off the list.
    await setPolicy(R().ext, { rules: [{ pattern: R().site.aPattern }, { pattern: R().site.host("b") }], actMode: true });
  });

  /** Requests that reached A2's or C's server at the collecting path, or carried the value anywhere off A. */
  const arrived = () =>
    R().site.log.filter((e) => e.role !== "a" && (e.path === "/so-collect" || `${e.query}${e.body}`.includes(SECRET) || `${e.query}${e.body}`.includes(OTHER)));
  const describeArrived = () => arrived().map((e) => `${e.role.toUpperCase()} ${e.method} ${e.path}${e.query}`).join(", ");

  /** What the page's own script reported about its attempt (sent, blocked, a navigation stopped). */
  const outcome = (kinds = ["sent", "blocked", "navfail", "noopen"]) => R().site.beacons("a", kinds);

  /** Waits until the attempt shows its result: at A2's or C's server, or in the page's report to A. */
  async function settled(kinds?: string[]): Promise<void> {
    await pollUntil("the attempt's outcome", async () => {
      await R().flush();
      return arrived().length > 0 || outcome(kinds).length > 0;
    }, { timeoutMs: 10_000, intervalMs: 50 });
  }

  /** Nothing reached A2 or C and no result carried the value. */
  async function clean(): Promise<void> {
    await R().flush();
    if (arrived().length) throw new Error(`LEAK: the secret's page reached ${describeArrived()}`);
    const leaks = R().leaks({ agentNamed: true, extra: [SECRET, OTHER] });
    if (leaks.length) throw new Error(`LEAK: ${leaks.join("; ")}`);
  }

  /**
   * The call returned and the document neither submitted nor began a navigation (its own counter:
   * the submit event and the navigate event fire within the input that submits), and is still there.
   */
  async function stayed(page: Page): Promise<void> {
    const att = await page.evaluate(() => (window as unknown as { __att?: number }).__att ?? -1).catch(() => -2);
    expect(att, "the page submitted or began a navigation (-1/-2: it is another document now)").toBe(0);
    expect(new URL(page.url()).pathname).toBe("/so-form");
  }

  const open = (q: Record<string, string>) => R().open("/so-form", q);
  const call = (name: string, args: Record<string, unknown>) => R().call(name, args, 20_000);
  const expectMismatch = (r: ToolResult | undefined) => expect(r?.error?.code, r?.text).toBe("secret_origin_mismatch");

  // ---------- what the agent's own input submits ----------

  for (const to of ["b", "c"] as const) {
    const where = to === "b" ? "A2 (allowed)" : "C (off the list)";
    it(`type submit:true into a text field whose form posts to ${where}: refused, nothing sent`, async () => {
      const { tabId, page } = await open({ kind: "text", to });
      const r = await call("type", { tabId, selector: "#tok", text: "{{secret:sopw}}", submit: true });
      if (to === "b") expectMismatch(r);
      else expect(["secret_origin_mismatch", "origin_not_allowed"], r.text).toContain(r.error?.code);
      await stayed(page);
      await clean();
    });
  }

  for (const [kind, sel] of [["text", "#tok"], ["pw", "#pw"]] as const) {
    it(`fill a ${kind === "pw" ? "password" : "text"} field, then click the form's button (posts to A2): refused, nothing sent`, async () => {
      const { tabId, page } = await open({ kind, to: "b" });
      const f = await call("fill", { tabId, selector: sel, value: "{{secret:sopw}}" });
      expect(f.isError, f.text).toBe(false);
      expectMismatch(await call("click", { tabId, selector: "#go" }));
      await stayed(page);
      expectMismatch(await call("mouse_click", { tabId, selector: "#go" }));
      await stayed(page);
      await clean();
    });
  }

  it("fill a text field, then press Enter in it (the form GETs from A2): refused, nothing sent", async () => {
    const { tabId, page } = await open({ kind: "text", to: "b", method: "get" });
    expect((await call("fill", { tabId, selector: "#tok", value: "{{secret:sopw}}" })).isError).toBe(false);
    expectMismatch(await call("press_key", { tabId, selector: "#tok", key: "Enter" }));
    await stayed(page);
    await clean();
  });

  it("type submit:true into a GET form aimed at A2 (the value would ride in the URL): refused, nothing sent", async () => {
    const { tabId, page } = await open({ kind: "text", to: "b", method: "get" });
    expectMismatch(await call("type", { tabId, selector: "#tok", text: "{{secret:sopw}}", submit: true }));
    await stayed(page);
    await clean();
  });

  it("fill_form with the secret, then click the button (posts to A2): refused, nothing sent", async () => {
    const { tabId, page } = await open({ kind: "pw", to: "b" });
    const f = await call("fill_form", { tabId, fields: [{ selector: "#user", value: "alice" }, { selector: "#pw", value: "{{secret:sopw}}" }] });
    expect(f.isError, f.text).toBe(false);
    expectMismatch(await call("click", { tabId, selector: "#go" }));
    await stayed(page);
    await clean();
  });

  it("the button's formaction sends to A2 (the form posts to A): refused, nothing sent", async () => {
    const { tabId, page } = await open({ kind: "pw", to: "b", mode: "formaction" });
    expect((await call("fill", { tabId, selector: "#pw", value: "{{secret:sopw}}" })).isError).toBe(false);
    expectMismatch(await call("click", { tabId, selector: "#go" }));
    await stayed(page);
    await clean();
  });

  it("the page re-points the form at A2 once the value lands: refused, nothing sent", async () => {
    const { tabId, page } = await open({ kind: "pw", to: "b", mode: "repoint" });
    expect((await call("fill", { tabId, selector: "#pw", value: "{{secret:sopw}}" })).isError).toBe(false);
    expectMismatch(await call("click", { tabId, selector: "#go" }));
    await stayed(page);
    await clean();
  });

  it("the page re-points the form at A2 from a submit listener that runs after every other: nothing sent", async () => {
    const { tabId } = await open({ kind: "pw", to: "b", mode: "late-repoint" });
    expect((await call("fill", { tabId, selector: "#pw", value: "{{secret:sopw}}" })).isError).toBe(false);
    await call("click", { tabId, selector: "#go" });
    await settled(["navfail"]);
    await clean();
  });

  it("the form targets a frame of the page (its response would land there) and posts to A2: refused, nothing sent", async () => {
    const { tabId, page } = await open({ kind: "pw", to: "b", mode: "frame-target" });
    expect((await call("fill", { tabId, selector: "#pw", value: "{{secret:sopw}}" })).isError).toBe(false);
    expectMismatch(await call("click", { tabId, selector: "#go" }));
    await stayed(page);
    await clean();
  });

  it("the form is in a frame of A's own, filled by ref from the top (posts to A2): refused, nothing sent", async () => {
    const { tabId, page } = await R().open("/so-frame", { kind: "pw", to: "b" });
    const frame = await R().frameReady(page, "a");
    const snap = await call("snapshot", { tabId });
    const f = await call("fill", { tabId, ref: refOf(snap.text, "textbox", "Password"), value: "{{secret:sopw}}" });
    expect(f.isError, f.text).toBe(false);
    expect(await frame.locator("#pw").inputValue()).not.toBe("");
    expectMismatch(await call("click", { tabId, ref: refOf(snap.text, "button", "Sign in") }));
    expect(await frame.evaluate(() => JSON.stringify((window as unknown as { __why?: string[] }).__why))).toBe("[]");
    await clean();
  });

  it("control, without a secret: a form in a frame of A's own that posts off the list, clicked by ref from the top, is stopped (I-38)", async () => {
    const { tabId, page } = await R().open("/so-frame", { kind: "text", to: "c" });
    const frame = await R().frameReady(page, "a");
    const snap = await call("snapshot", { tabId });
    expect((await call("fill", { tabId, ref: refOf(snap.text, "textbox", "Token"), value: "plain-token" })).isError).toBe(false);
    const r = await call("click", { tabId, ref: refOf(snap.text, "button", "Sign in") });
    expect(r.error?.code, r.text).toBe("origin_not_allowed");
    expect(await frame.evaluate(() => JSON.stringify((window as unknown as { __why?: string[] }).__why))).toBe("[]");
    await clean();
  });

  // ---------- what the page's own script submits ----------

  it("the page submits its A2 form into a frame of its own with form.submit() (no submit event, the navigation is the frame's): nothing sent", async () => {
    const { tabId } = await open({ kind: "pw", to: "b", mode: "frame-target", auto: "1" });
    await call("fill", { tabId, selector: "#pw", value: "{{secret:sopw}}" });
    await settled(["sent", "blocked"]);
    await clean();
  });

  for (const [mode, what] of [
    ["submit-now", "form.submit() as the value lands (during the call)"],
    ["submit-later", "form.submit() 400 ms later (after the call)"],
    ["request-later", "requestSubmit() 400 ms later (after the call)"],
  ] as const) {
    it(`the page submits its A2 form itself with ${what}: nothing sent`, async () => {
      const { tabId } = await open({ kind: "pw", to: "b", mode });
      await call("fill", { tabId, selector: "#pw", value: "{{secret:sopw}}" });
      // form.submit() has no submit event: its navigation is stopped (navfail); requestSubmit()'s
      // submit event is, and the page sees that when the call returns (returned).
      await settled(["navfail", "returned"]);
      await clean();
    });
  }

  it("the page opens its A2 form's submission in a new tab with form.submit(): nothing sent", async () => {
    const { tabId } = await open({ kind: "pw", to: "b", mode: "blank", auto: "1" });
    const before = await R().tabIds();
    // type's focusing click gives the page the user activation a new window needs.
    await call("type", { tabId, selector: "#pw", text: "{{secret:sopw}}" });
    await R().newTab(before);
    // The new tab's request either reaches A2 or ends in the browser's error page.
    await pollUntil("the new tab's load to end", async () => {
      const p = R().browser.context.pages().find((x) => x.url().includes("/so-collect") || x.url().startsWith("chrome-error://"));
      return arrived().length > 0 || (p ? (await p.waitForLoadState("load", { timeout: 5_000 }).catch(() => undefined), true) : false);
    }, { timeoutMs: 8_000, intervalMs: 50 });
    await clean();
  });

  // ---------- what the page's script sends itself ----------

  for (const to of ["b", "c"] as const) {
    for (const how of ["fetch", "fetch-get", "beacon", "img", "frame", "post-form"]) {
      it(`the page's script sends the value to ${to === "b" ? "A2" : "C"} with ${how}: nothing arrives`, async () => {
        const { tabId } = await open({ kind: "pw", to, mode: `exfil-${how}` });
        const f = await call("fill", { tabId, selector: "#pw", value: "{{secret:sopw}}" });
        await settled(how === "post-form" ? ["navfail"] : undefined);
        await clean();
        // A departure the guard stopped while the call ran fails it; the network's refusal does not.
        if (how === "post-form") expect([undefined, "secret_origin_mismatch"], f.text).toContain(f.error?.code);
        else expect(f.isError, f.text).toBe(false);
      });
    }
  }

  it("the page hands the value to C's frame, which sends it to C: nothing arrives", async () => {
    const { tabId, page } = await open({ kind: "pw", to: "c", mode: "exfil-postmessage" });
    await R().frameReady(page, "c");
    expect((await call("fill", { tabId, selector: "#pw", value: "{{secret:sopw}}" })).isError).toBe(false);
    await settled();
    await clean();
  });

  it("the extension's worker stops, then the page sends the value to A2: still refused; the next document may reach A2", async () => {
    const { tabId, page } = await open({ kind: "pw", to: "b", mode: "exfil-ondemand" });
    expect((await call("fill", { tabId, selector: "#pw", value: "{{secret:sopw}}" })).isError).toBe(false);
    await R().browser.stopServiceWorker();
    await R().torii.waitForLink(false, 10_000);
    await page.evaluate(() => (window as unknown as { __send(): void }).__send());
    await settled();
    await clean();
    expect(outcome(["blocked"]).length).toBe(1);
    // A new document in the tab holds nothing: A2 answers it again (the worker, woken by the
    // extension page and reconnected, ends the hold from the state it kept).
    await R().ext.evaluate(() => (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }).chrome.runtime.sendMessage({ type: "torii.getState" }));
    await R().torii.waitForLink(true, 15_000);
    const url = R().site.url("a", "/so-landing", { x: "b", t: [...R().site.tags][0] ?? "" });
    // The daemon routes calls to the browser again a moment after the link is back.
    const n = await pollUntil("the browser to take calls again", async () => {
      const r = await call("navigate", { tabId, url });
      return r.error?.code === "extension_not_connected" ? undefined : r;
    }, { timeoutMs: 15_000, intervalMs: 200 });
    expect(n.isError, n.text).toBe(false);
    await pollUntil("the landing page's request to A2", async () => (await R().flush(), outcome(["sent", "blocked"]).find((b) => b.data === "after")), {
      timeoutMs: 10_000,
      intervalMs: 50,
    });
    expect(outcome(["sent"]).some((b) => b.data === "after")).toBe(true);
  });

  it("the page's script navigates to A2 with the value in the URL: stopped, nothing arrives", async () => {
    const { tabId } = await open({ kind: "pw", to: "b", mode: "exfil-nav" });
    await call("fill", { tabId, selector: "#pw", value: "{{secret:sopw}}" });
    await settled(["navfail"]);
    await clean();
  });

  for (const how of ["open", "open-blank"]) {
    it(`the page's script opens a popup that carries the value to C (${how}): nothing arrives`, async () => {
      const { tabId } = await open({ kind: "text", to: "c", mode: `exfil-${how}` });
      // type's focusing click gives the page the user activation a popup needs.
      await call("type", { tabId, selector: "#tok", text: "{{secret:sopw}}" });
      await settled(["opened", "noopen", "sent", "blocked"]);
      // The popup really opened (the focusing click's activation): otherwise the test proves nothing.
      expect(outcome(["noopen"]), "the browser refused the popup itself").toEqual([]);
      if (outcome(["opened"]).length) {
        await pollUntil("the popup's load to end", async () => {
          const p = R().browser.context.pages().find((x) => x.url().includes("/so-collect") || x.url().startsWith("chrome-error://"));
          return arrived().length > 0 || (p ? (await p.waitForLoadState("load", { timeout: 5_000 }).catch(() => undefined), true) : false);
        }, { timeoutMs: 8_000, intervalMs: 50 }).catch(() => undefined);
      }
      await clean();
    });
  }

  // ---------- controls and bad input ----------

  it("control: the honest form posts the value to A; the next document may reach A2 again", async () => {
    const { tabId, page } = await open({ kind: "pw", to: "a", mode: "honest" });
    expect((await call("fill", { tabId, selector: "#pw", value: "{{secret:sopw}}" })).isError).toBe(false);
    const r = await call("click", { tabId, selector: "#go" });
    expect(r.isError, r.text).toBe(false);
    await pollUntil("A to receive the post", () => R().site.log.find((e) => e.role === "a" && e.method === "POST" && e.body.includes(SECRET)));
    await pollUntil("the landing page", () => new URL(page.url()).pathname === "/so-landing");
    // The landing page asks A2 for something until it is let through: the tab's rules end with the
    // document that held the secret.
    await pollUntil("the landing page's request to A2", async () => (await R().flush(), outcome(["sent", "blocked"]).find((b) => b.data === "after")), {
      timeoutMs: 10_000,
      intervalMs: 50,
    });
    expect(outcome(["sent"]).some((b) => b.data === "after")).toBe(true);
    await clean();
  });

  it("bad input: a secret name that does not exist is secret_not_found in fill, type and fill_form; nothing filled", async () => {
    const { tabId, page } = await open({ kind: "pw", to: "a" });
    for (const [tool, args] of [
      ["fill", { selector: "#pw", value: "{{secret:no-such}}" }],
      ["type", { selector: "#user", text: "{{secret:no-such}}" }],
      ["fill_form", { fields: [{ selector: "#user", value: "bob" }, { selector: "#pw", value: "{{secret:no-such}}" }] }],
    ] as const) {
      const r = await call(tool, { tabId, ...args });
      expect(r.error?.code, `${tool}: ${r.text}`).toBe("secret_not_found");
    }
    expect(await page.locator("#pw").inputValue()).toBe("");
    expect(await page.locator("#user").inputValue()).toBe("");
    await clean();
  });

  it("bad input: a secret bound to another origin is secret_origin_mismatch in fill, type and fill_form; nothing filled", async () => {
    const { tabId, page } = await open({ kind: "pw", to: "a" });
    for (const [tool, args] of [
      ["fill", { selector: "#pw", value: "{{secret:soc}}" }],
      ["type", { selector: "#user", text: "{{secret:soc}}" }],
      ["fill_form", { fields: [{ selector: "#user", value: "bob" }, { selector: "#pw", value: "{{secret:soc}}" }] }],
    ] as const) {
      const r = await call(tool, { tabId, ...args });
      expectMismatch(r);
    }
    expect(await page.locator("#pw").inputValue()).toBe("");
    expect(await page.locator("#user").inputValue()).toBe("");
    await clean();
  });
});

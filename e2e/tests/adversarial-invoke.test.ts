// Adversarial: `invoke` as code execution under another name. A's page offers fetch, eval and
// setTimeout bound to the window, a jQuery-style `$.globalEval`, page functions that submit, delete
// or leave for the attacker, and the bad inputs (a getter, proxies, a class, bound functions,
// toString that lies, Function.prototype.toString rewritten). With invoke on but evaluate's program
// switch off, act mode off, or an approval set to deny, nothing may run: judged from what reached
// the agent, what A's page reports it ran ("did" beacons) and what reached B's server
// (SECURITY I-71).
import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { useAttackRig } from "../src/attack/rig.ts";
import { describeBrowser } from "../src/harness.ts";
import { pollUntil } from "../src/util.ts";

type Choice = "allow" | "ask" | "deny";
const EFFECT_KINDS = ["evaluate", "submit", "destructive_click", "new_origin"] as const;

describeBrowser("adversarial: invoke is code execution", () => {
  const R = useAttackRig("adv-invoke", { config: { broker: { toolGroups: ["invoke"] } } });

  /** A URL of B's API: its answer carries B's marker, its request lands in B's log. */
  const bApi = (name: string) => R().site.url("b", `/api/${name}`);
  /** Which of A's page functions ran (each beacons "did" first; every page flushed). */
  const ran = async () => (await R().reached("a", ["did"])).map((b) => b.data);
  /** Every request that reached B, beacons aside. */
  const atB = () => R().site.requests("b").map((e) => e.path);
  /** What the text a timer was given, or a script, set in the page; read after a timer queued later than theirs. */
  const flags = (page: Page) =>
    page.evaluate(
      () =>
        new Promise<string>((resolve) =>
          setTimeout(() => {
            const w = window as unknown as Record<string, unknown>;
            resolve(["__timer", "__ge", "__eval"].filter((k) => w[k] !== undefined).join(","));
          }, 50),
        ),
    );

  async function consent(o: { act?: boolean; program?: boolean; approvals?: Record<string, Choice>; approvalTimeoutMs?: number } = {}) {
    await R().policy({ invoke: true, evalProgram: o.program ?? true, actMode: o.act ?? true, approvals: o.approvals ?? {}, approvalTimeoutMs: o.approvalTimeoutMs ?? 60_000 });
  }
  async function kit(query: Record<string, string> = {}) {
    await consent();
    const opened = await R().open("/invoke-kit", query);
    await opened.page.waitForFunction(() => !!(window as unknown as { app?: unknown }).app);
    return opened;
  }

  // ---------- code under another name, with evaluate's program switch off ----------

  const CODE_BY_ANOTHER_NAME: [string, (b: (n: string) => string) => unknown[]][] = [
    ["boundFetch", (b) => [b("fetch")]],
    ["boundEval", (b) => [`window.__eval=1;fetch(${JSON.stringify(b("eval"))}).then(function(r){return r.text();})`]],
    ["boundTimer", (b) => [`window.__timer=1;fetch(${JSON.stringify(b("timer"))})`, 0]],
    ["$.globalEval", (b) => [`window.__ge=1;fetch(${JSON.stringify(b("globalEval"))})`]],
  ];
  for (const lie of [false, true]) {
    for (const [path, args] of CODE_BY_ANOTHER_NAME) {
      it(`${path}${lie ? " on a page whose Function.prototype.toString lies" : ""}: invoke on, evaluate expression on, program off → eval_not_allowed, nothing runs, nothing reaches B`, async () => {
        const { tabId, page } = await kit(lie ? { lie: "proto" } : {});
        await R().policy({ invoke: true, evalExpression: true, evalProgram: false });
        const res = await R().call("invoke", { tabId, path, args: JSON.stringify(args(bApi)) });
        const set = await flags(page);
        await R().expectClean({ agentNamed: true, kinds: [] });
        expect(atB(), "requests that reached B").toEqual([]);
        expect(set, "what the code set in the page").toBe("");
        expect(await ran()).toEqual([]);
        expect(res.error?.code, res.text).toBe("eval_not_allowed");
        expect(res.text).toContain("evaluate (program)");
      });
    }
  }

  // ---------- effects, with act mode off or an approval set to deny ----------

  const EFFECTS = ["app.submitOrder", "app.deleteAccount", "app.leave", "app.hello"];

  /** Nothing of A's page functions ran: no "did", no submission at A, nothing at B, the page still there. */
  async function nothingHappened(page: Page, url: string) {
    expect(await ran(), "page functions that ran").toEqual([]);
    expect(R().site.requests("a", "/done"), "submissions at A").toEqual([]);
    expect(R().site.beacons("a", ["destroyed", "submit"]), "A's destructive button or form").toEqual([]);
    expect(atB(), "requests that reached B").toEqual([]);
    expect(page.url()).toBe(url);
  }

  it("act mode off (invoke and evaluate's program on): submit, delete, leave and a harmless call are each act_mode_off, nothing runs", async () => {
    const { tabId, page, url } = await kit();
    await consent({ act: false });
    for (const path of EFFECTS) {
      const res = await R().call("invoke", { tabId, path, args: '["x"]' });
      expect(res.error?.code, `${path}: ${res.text}`).toBe("act_mode_off");
    }
    await nothingHappened(page, url);
    await R().expectClean({ kinds: [] });
  });

  for (const kind of EFFECT_KINDS) {
    it(`approval "${kind}" set to deny: every page function is refused before it runs, naming "${kind}"`, async () => {
      const { tabId, page, url } = await kit();
      await consent({ approvals: { [kind]: "deny" } });
      for (const path of EFFECTS) {
        const res = await R().call("invoke", { tabId, path, args: '["x"]' });
        expect(res.error?.code, `${path}: ${res.text}`).toBe("approval_denied");
        expect(res.text).toContain(kind);
        expect(res.error?.denied).toEqual([kind]);
      }
      await nothingHappened(page, url);
      await R().expectClean({ kinds: [] });
    });
  }

  it('every approval set to "ask": one request names all four effects; denied, nothing runs; approved, it runs once', async () => {
    const { tabId, page, url } = await kit();
    await consent({ approvals: { evaluate: "ask", submit: "ask", destructive_click: "ask", new_origin: "ask" }, approvalTimeoutMs: 20_000 });
    const pending = async () =>
      R().ext.evaluate(async () => {
        const c = (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<{ approvals: { id: string; kind: string; also?: string[]; tool: string; text?: string }[] }> } } }).chrome;
        return (await c.runtime.sendMessage({ type: "torii.approval.list" })).approvals;
      });
    const decide = (id: string, approve: boolean) =>
      R().ext.evaluate(async ({ id, approve }) => {
        const c = (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }).chrome;
        await c.runtime.sendMessage({ type: "torii.approval.decide", id, approve });
      }, { id, approve });

    for (const approve of [false, true]) {
      const call = R().call("invoke", { tabId, path: "app.submitOrder" });
      const reqs = await pollUntil("the approval request", async () => {
        const l = await pending();
        return l.length ? l : undefined;
      }, { timeoutMs: 10_000, intervalMs: 50 });
      const req = reqs[0]!;
      // The person's window shows every effect the one answer covers, and no "always allow" (it
      // would write one kind's choice for a request that stands for four).
      const w = await pollUntil("the approval window", () => R().browser.context.pages().find((p) => p.url().includes("/approval.html")), { timeoutMs: 10_000, intervalMs: 50 });
      await w.locator("#details").getByText("Submit a form", { exact: false }).waitFor({ timeout: 5_000 });
      const shown = { details: await w.locator("#details").innerText(), always: await w.locator("#always-row").isVisible() };
      await decide(req.id, approve);
      const res = await call;
      expect(reqs.length, JSON.stringify(reqs)).toBe(1);
      expect(req.tool).toBe("invoke");
      expect([req.kind, ...(req.also ?? [])].sort()).toEqual([...EFFECT_KINDS].sort());
      expect(req.text).toBe("app.submitOrder()");
      for (const label of ["Submit a form", "Click something the page marks destructive", "Navigate to another origin", "app.submitOrder()"]) expect(shown.details).toContain(label);
      expect(shown.always).toBe(false);
      if (!approve) {
        expect(res.error?.code, res.text).toBe("approval_denied");
        await nothingHappened(page, url);
      } else {
        expect(res.isError, res.text).toBe(false);
        expect(res.text).toBe('"submitted"');
        expect(await pending()).toEqual([]);
        await pollUntil("the submission at A", () => (R().site.requests("a", "/done").length ? true : undefined), { timeoutMs: 10_000, intervalMs: 50 });
        expect(await ran()).toEqual(["submit"]);
      }
    }
  });

  it("a filled secret handed back base64-encoded by a page function: secret_unmaskable, nothing runs", async () => {
    const secret = 'Iv0 "k&m+t/ w@Q8xé';
    const added = (await R().ext.evaluate(
      async (m) => (globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }).chrome.runtime.sendMessage(m),
      { type: "torii.secrets.add", name: "invokepw", kind: "password", value: secret, origins: [R().site.origin.a] },
    )) as { ok: boolean };
    expect(added.ok).toBe(true);
    const { tabId, page } = await kit();
    const f = await R().call("fill", { tabId, selector: "#q", value: "{{secret:invokepw}}" });
    expect(f.isError, f.text).toBe(false);
    const res = await R().call("invoke", { tabId, path: "app.peek" });
    const b64 = Buffer.from(secret, "utf8").toString("base64");
    await R().expectClean({ kinds: [], extra: [secret, b64.slice(0, 12), b64.slice(12, 24)] });
    expect(await ran()).toEqual([]);
    expect(await page.locator("#q").inputValue()).toBe(secret);
    expect(res.error?.code, res.text).toBe("secret_unmaskable");
  });

  // ---------- bad inputs, with every switch and approval on ----------

  it("bad inputs each get a typed error and run nothing: a missing path, a getter, proxies, a class, bound functions, toString that lies, built-ins", async () => {
    const { tabId, page, url } = await kit();
    const cases: [string, unknown[], string, string][] = [
      ["app.nothing", [], "not_found", "app.nothing does not exist"],
      ["nothing.at.all", [], "not_found", "nothing does not exist"],
      ["app.session.id", [], "invalid_argument", "app.session is a getter"],
      ["app.callableProxy", [], "invalid_argument", "cannot show the source"],
      ["app.trap.x", [], "page_error", "the trap refuses"],
      ["app.Store", [], "invalid_argument", "app.Store is a class"],
      ["app.Store.prototype.reset", [], "invalid_argument", "prototypes"],
      ["app.boundHello", ["x"], "invalid_argument", "cannot show the source"],
      ["app.lyingFetch", [bApi("lying")], "invalid_argument", "cannot show the source"],
      ["boundFetch", [bApi("bound")], "invalid_argument", "cannot show the source"],
      ["boundEval", [`window.__eval=1;fetch(${JSON.stringify(bApi("eval"))})`], "invalid_argument", "cannot show the source"],
      ["boundTimer", [`window.__timer=1;fetch(${JSON.stringify(bApi("timer"))})`, 0], "invalid_argument", "cannot show the source"],
      ["fetch", [bApi("fetch")], "invalid_argument", "cannot show the source"],
      ["setTimeout", [`window.__timer=1`, 0], "invalid_argument", "cannot show the source"],
      ["Function", ["return 1"], "invalid_argument", "cannot show the source"],
      ["eval", ["window.__eval=1"], "invalid_argument", "not a property name"],
    ];
    for (const [path, args, code, says] of cases) {
      const res = await R().call("invoke", { tabId, path, args: JSON.stringify(args) });
      expect(res.error?.code, `${path}: ${res.text}`).toBe(code);
      expect(res.text, path).toContain(says);
      expect(res.text, path).toContain("nothing was called");
    }
    expect(await flags(page)).toBe("");
    await nothingHappened(page, url);
    await R().expectClean({ agentNamed: true, kinds: [] });
    // A page function whose own toString claims to be built in is called as what it is.
    const honest = await R().call("invoke", { tabId, path: "app.honest", args: '["torii"]' });
    expect(honest.text, honest.text).toBe('"hello torii"');
  });

  // ---------- control: with the person's consent the same page runs (the attack page is armed) ----------

  it("control: with invoke, evaluate program, act mode and the approvals allowed, $.globalEval runs and a page function submits", async () => {
    const { tabId, page } = await kit();
    const ge = await R().call("invoke", { tabId, path: "$.globalEval", args: '["window.__ge=1"]' });
    expect(ge.isError, ge.text).toBe(false);
    expect(await flags(page)).toBe("__ge");
    const sub = await R().call("invoke", { tabId, path: "app.submitOrder" });
    expect(sub.isError, sub.text).toBe(false);
    await pollUntil("the submission at A", () => (R().site.requests("a", "/done").length ? true : undefined), { timeoutMs: 10_000, intervalMs: 50 });
    expect(await ran()).toEqual(["globalEval", "submit"]);
  });
});

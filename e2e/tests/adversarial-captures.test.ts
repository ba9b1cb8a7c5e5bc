// Attacks on network captures and their exports: a sensitive capture's HAR and replay packet,
// read back as the agent reads them (resources/read), must honour every switch the matching read
// tool honours. A's /login sets an HttpOnly cookie in a response the capture sees, the page sets a
// readable one, and its fetches carry a bearer token and bodies to A (cookies on, HttpOnly off,
// Console & network on), A2 (sensitive capture only) and B (off the list). What reached the
// servers shows the page really sent every value; what reached the agent (every tool result and
// every exported file) and what the extension's session store holds must lack each value whose
// switch is off, while the allowed ones are there. The switches are then turned off after
// recording, and the exports read again.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { type Browser, closeWebPages, pairBrowser } from "../src/browser.ts";
import { CRED, CaptureSite } from "../src/attack/capture-site.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp, type ToolResult } from "../src/mcp.ts";
import { type RuleIn, setPolicy } from "../src/safety.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

const BODY = { a: "BODY-allowed-2d9e", a2: "BODY-switchoff-8c1f4a", b: "BODY-offlist-61c0e7" } as const;

interface Row {
  n: number;
  method: string;
  url: string;
  blocked?: boolean;
  status?: number;
  headers?: number;
  body?: { size: number; kept: number; omitted?: string };
}

interface HarEntry {
  request: {
    method: string;
    url: string;
    headers: { name: string; value: string }[];
    cookies: { name: string; value: string }[];
    postData?: { text?: string };
  };
  response: { headers: unknown[]; cookies: unknown[] };
  comment?: string;
}

describeBrowser("adversarial: captures and exports honour the read tools' switches", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let mcp: Mcp;
  let site: CaptureSite;
  let ext: Page;
  const results: ToolResult[] = [];

  const call = async (name: string, args: Record<string, unknown> = {}, m = mcp) => {
    const r = await m.call(name, args);
    results.push(r);
    return r;
  };
  const ok = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await call(name, args);
    expect(r.isError, `${name}: ${r.text}`).toBe(false);
    return r;
  };
  /** The person's policy: A, A2 and their switches; B never on the list. */
  const policy = (a: Partial<RuleIn> | null, a2: Partial<RuleIn> = {}) =>
    setPolicy(ext, {
      rules: [...(a ? [{ ...a, pattern: site.pattern("a"), act: true }] : []), { ...a2, pattern: site.pattern("a2"), act: true }],
      actMode: true,
    });
  async function open(): Promise<{ tabId: number; page: Page }> {
    const url = `${site.origin.a}/page`;
    const r = await ok("navigate", { url, newTab: true });
    const page = await pollUntil(`a page at ${url}`, () => browser.context.pages().find((p) => p.url() === url), { timeoutMs: 10_000, intervalMs: 50 });
    return { tabId: r.data.tabId as number, page };
  }
  const rows = async (captureId: string): Promise<Row[]> => (await ok("capture_list", { captureId })).data.requests as Row[];
  /** Waits until every request the page sent is finished and, where headers are kept, has them. */
  const recorded = (captureId: string, want: { url: string; headers: boolean }[]) =>
    pollUntil(`${want.length} finished requests in capture ${captureId}`, async () => {
      const rs = await rows(captureId);
      const done = want.every((w) => rs.some((r) => r.method === "POST" && r.url === w.url && r.status !== undefined && (r.headers !== undefined) === w.headers));
      return done ? rs : undefined;
    }, { timeoutMs: 20_000, intervalMs: 100 });
  /** capture_export, then the file read back as the agent reads it: resources/read of its link. */
  async function exported(captureId: string, format: "har" | "http", m = mcp): Promise<{ text: string; uri: string; result: ToolResult }> {
    const r = await call("capture_export", { captureId, format }, m);
    expect(r.isError, r.text).toBe(false);
    const uri = (r.data.file as { uri: string }).uri;
    const read = await m.client.readResource({ uri });
    const c = read.contents[0] as { blob?: string; text?: string };
    const text = c.blob !== undefined ? Buffer.from(c.blob, "base64").toString("utf8") : (c.text ?? "");
    expect(text.length).toBeGreaterThan(0);
    return { text, uri, result: r };
  }
  const entriesOf = (har: string) => (JSON.parse(har) as { log: { entries: HarEntry[] } }).log.entries;
  const header = (e: HarEntry, name: string) => e.request.headers.find((h) => h.name.toLowerCase() === name)?.value;
  const entryTo = (es: HarEntry[], path: string) => es.find((e) => e.request.method === "POST" && e.request.url.endsWith(path)) as HarEntry;
  /** Every tool result this test got, as text. */
  const agentSaw = () => results.map((r) => `${r.text}\n${JSON.stringify(r.data)}\n${JSON.stringify(r.error ?? {})}`).join("\n");
  /** The capture as the extension's session store holds it (what a restarted worker would find). */
  const stored = (captureId: string) =>
    ext.evaluate(async (id) => {
      const c = (globalThis as unknown as { chrome: { storage: { session: { get(k: string): Promise<Record<string, unknown>> } } } }).chrome;
      return JSON.stringify((await c.storage.session.get(`torii_capture_${id}`))[`torii_capture_${id}`] ?? null);
    }, captureId);
  /** The page logs in (an HttpOnly cookie in /login's response), sets a readable cookie, then sends. */
  async function attack(page: Page, to: ("a" | "a2" | "b")[]): Promise<void> {
    await page.evaluate(() => (window as unknown as { login(): Promise<number> }).login());
    await page.evaluate((v) => (window as unknown as { setReadable(v: string): string }).setReadable(v), CRED.readable);
    await page.evaluate(
      async ([targets, token]) => {
        const w = window as unknown as { send(u: string, b: string, t: string): Promise<number> };
        await Promise.all(targets.map(([url, body]) => w.send(url as string, body as string, token as string).catch(() => 0)));
      },
      [to.map((r) => [`${site.origin[r]}/api/echo?to=${r}`, BODY[r]]), CRED.token] as const,
    );
  }

  beforeAll(async () => {
    torii = await rig.daemon();
    await torii.configure({ broker: { toolGroups: ["devtools"] } }); // the capture tools are offered only with their group on
    await torii.start();
    browser = await rig.browser();
    ({ popup: ext } = await pairBrowser(browser, torii));
    site = await CaptureSite.start();
    mcp = await Mcp.connect(torii, "adv-captures");
    await mcp.waitForCatalogue();
  });
  afterAll(async () => {
    await mcp?.close();
    await site?.close();
  });
  beforeEach(async () => {
    results.length = 0;
    site.seen.length = 0;
    await closeWebPages(browser);
    await browser.context.clearCookies();
  });

  it("HttpOnly values, Authorization and bodies whose switch is off never reach the agent through a HAR or a replay packet; the allowed ones do", async () => {
    // A: sensitive capture, Cookies and Console & network on, HttpOnly values off. A2: sensitive capture only.
    await policy({ captureSensitive: true, cookies: true, observe: true }, { captureSensitive: true });
    const { tabId, page } = await open();
    const id = (await ok("capture_start", { tabId, sensitive: true })).data.captureId as string;
    await attack(page, ["a", "a2", "b"]);
    // The page really sent every value: the servers saw them.
    for (const r of ["a", "a2"] as const) {
      const got = site.got(r, "POST", "/api/echo");
      expect(got.map((g) => [g.body, g.authorization]), r).toEqual([[BODY[r], `Bearer ${CRED.token}`]]);
      expect(got[0]?.cookie).toContain(`hsid=${CRED.httpOnly}`);
      expect(got[0]?.cookie).toContain(`pref=${CRED.readable}`);
    }
    const rs = await recorded(id, [
      { url: `${site.origin.a}/login`, headers: true },
      { url: `${site.origin.a}/api/echo?to=a`, headers: true },
      { url: `${site.origin.a2}/api/echo?to=a2`, headers: true },
      { url: "", headers: false },
    ]);

    const har = await exported(id, "har");
    const http = await exported(id, "http");
    for (const [what, text] of [["HAR", har.text], ["replay packet", http.text]] as const) {
      // What the switches forbid reached the agent nowhere…
      for (const [label, v] of [["the HttpOnly cookie", CRED.httpOnly], ["the Authorization token", CRED.token], ["A2's body", BODY.a2], ["B's body", BODY.b], ["B's origin", site.origin.b]]) {
        expect(text, `${label} in the ${what}`).not.toContain(v);
      }
      // …while the capture still works: the readable cookie and A's body are there.
      expect(text, what).toContain(`pref=${CRED.readable}`);
      expect(text, what).toContain(BODY.a);
      expect(text, what).toContain("withheld by Torii");
    }
    const es = entriesOf(har.text);
    const a = entryTo(es, "to=a");
    expect(a.request.cookies).toContainEqual({ name: "pref", value: CRED.readable });
    expect(a.request.cookies.find((c) => c.name === "hsid")?.value).toMatch(/withheld by Torii.*"HttpOnly values"/);
    expect(header(a, "authorization")).toMatch(/withheld by Torii.*Authorization.*"HttpOnly values"/);
    expect(a.request.postData?.text).toBe(BODY.a);
    // A2 has no Cookies switch: not even a cookie's name; its body needs Console & network.
    const a2 = entryTo(es, "to=a2");
    expect(header(a2, "cookie")).toMatch(/withheld by Torii.*"Cookies"/);
    expect(a2.request.cookies).toEqual([]);
    expect(a2.request.postData).toBeUndefined();
    expect(a2.comment).toMatch(/request body withheld.*"Console & network"/);
    expect(a2.comment).toMatch(/"Cookies"/);
    // Response headers (the login's Set-Cookie among them) are never kept.
    expect(har.text).not.toMatch(/set-cookie/i);
    for (const e of es) expect([e.response.headers, e.response.cookies]).toEqual([[], []]);
    // capture_list says so too.
    expect(rs.find((r) => r.url.endsWith("to=a"))?.body).toEqual({ size: BODY.a.length, kept: BODY.a.length });
    expect(rs.find((r) => r.url.endsWith("to=a2"))?.body).toMatchObject({ kept: 0, omitted: "observe_off" });
    // The summaries say what was withheld, never a value.
    expect(har.result.text).toMatch(/withheld/);
    const seen = agentSaw();
    for (const v of [CRED.httpOnly, CRED.token, BODY.a2, BODY.b, CRED.readable, BODY.a]) expect(seen).not.toContain(v);
    // Never recorded at all: the session store (what a restarted worker finds) lacks them too.
    const s = await pollUntil("the capture's headers in the session store", async () => {
      const x = await stored(id);
      return x.includes(CRED.readable) && x.includes(BODY.a) ? x : undefined;
    });
    for (const v of [CRED.httpOnly, CRED.token, BODY.a2, BODY.b]) expect(s).not.toContain(v);
  });

  it("switches turned off after recording: the export judges again and withholds what the policy forbids now", async () => {
    // Everything on while recording: the values are kept (and exported) then.
    const all = { captureSensitive: true, cookies: true, cookiesHttpOnly: true, observe: true };
    await policy(all);
    const { tabId, page } = await open();
    const id = (await ok("capture_start", { tabId, sensitive: true })).data.captureId as string;
    await attack(page, ["a"]);
    await recorded(id, [{ url: `${site.origin.a}/api/echo?to=a`, headers: true }]);
    await ok("capture_stop", { captureId: id });
    const before = await exported(id, "har");
    const a0 = entryTo(entriesOf(before.text), "to=a");
    expect(a0.request.cookies).toContainEqual({ name: "hsid", value: CRED.httpOnly });
    expect(header(a0, "authorization")).toBe(`Bearer ${CRED.token}`);
    expect(a0.request.postData?.text).toBe(BODY.a);

    // HttpOnly values and Console & network off: the HttpOnly value, the token and the body go.
    await policy({ captureSensitive: true, cookies: true });
    for (const format of ["har", "http"] as const) {
      const { text } = await exported(id, format);
      for (const v of [CRED.httpOnly, CRED.token, BODY.a]) expect(text, format).not.toContain(v);
      expect(text, format).toContain(`pref=${CRED.readable}`);
      expect(text, format).toMatch(/withheld by Torii: HttpOnly value/);
    }
    const a1 = entryTo(entriesOf((await exported(id, "har")).text), "to=a");
    expect(a1.comment).toMatch(/request body withheld.*"Console & network"/);
    // Cookies off too: no cookie at all.
    await policy({ captureSensitive: true, cookiesHttpOnly: true, observe: true });
    const noCookies = await exported(id, "har");
    for (const v of [CRED.httpOnly, CRED.readable, CRED.token]) expect(noCookies.text).not.toContain(v);
    expect(noCookies.text).toContain(BODY.a);
    // The capture switch off: metadata only.
    await policy({ cookies: true, cookiesHttpOnly: true, observe: true });
    const meta = await exported(id, "har");
    for (const v of [CRED.httpOnly, CRED.readable, CRED.token, BODY.a]) expect(meta.text).not.toContain(v);
    expect(entryTo(entriesOf(meta.text), "to=a").comment).toMatch(/sensitive-capture switch/);
    const replay = await call("capture_export", { captureId: id, format: "http" });
    expect(replay.error?.code, replay.text).toBe("not_found");
    // The page itself off the list: nothing is read.
    await policy(null);
    const off = await call("capture_export", { captureId: id, format: "har" });
    expect(off.error?.code, off.text).toBe("origin_not_allowed");
    const list = await call("capture_list", { captureId: id });
    expect(list.error?.code, list.text).toBe("origin_not_allowed");
    const seen = agentSaw();
    for (const v of [CRED.httpOnly, CRED.token, CRED.readable, BODY.a]) expect(seen).not.toContain(v);
  });

  it("bad inputs: an unknown capture, another session's capture and its file, a bad format", async () => {
    await policy({ captureSensitive: true, cookies: true, cookiesHttpOnly: true, observe: true });
    const unknown = await call("capture_export", { captureId: "nope-0000" });
    expect(unknown.error?.code, unknown.text).toBe("not_found");
    expect(unknown.error?.hint).toMatch(/capture_list/);
    const empty = await call("capture_export", { captureId: "" });
    expect(empty.error?.code, empty.text).toBe("invalid_argument");
    const { tabId, page } = await open();
    const id = (await ok("capture_start", { tabId, sensitive: true })).data.captureId as string;
    await attack(page, ["a"]);
    await recorded(id, [{ url: `${site.origin.a}/api/echo?to=a`, headers: true }]);
    const bad = await call("capture_export", { captureId: id, format: "pcap" });
    expect(bad.error?.code, bad.text).toBe("invalid_argument");
    const mine = await exported(id, "har");
    expect(mine.text).toContain(CRED.httpOnly); // all switches on: the person allowed it, to this session
    const other = await Mcp.connect(torii, "adv-captures-other");
    try {
      await other.waitForCatalogue();
      const x = await call("capture_export", { captureId: id, format: "har" }, other);
      expect(x.error?.code, x.text).toBe("not_found");
      expect(x.error?.message).toBe(unknown.error?.message.replace("nope-0000", id));
      // The file is this session's own: another session cannot read it, by its link or at all.
      await expect(other.client.readResource({ uri: mine.uri })).rejects.toThrow();
      const listed = await other.client.listResources();
      expect(JSON.stringify(listed)).not.toContain(id);
    } finally {
      await other.close();
    }
    const seen = agentSaw();
    for (const v of [CRED.httpOnly, CRED.token, CRED.readable, BODY.a]) expect(seen).not.toContain(v);
  });
});

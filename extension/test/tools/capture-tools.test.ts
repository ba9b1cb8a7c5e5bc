// The capture tools against a small fake of the chrome.* APIs they use (webRequest events fired by
// the test): which listeners a metadata capture registers, the document binding, the export handed
// to the download sandbox as a resource link, a session's captures forgotten when it ends, and the
// browser's cookie jar telling an HttpOnly cookie from a readable one as headers are recorded.
import { beforeAll, describe, expect, it, vi } from "vitest";

// The download sandbox, as the tool layer's putFile: what an export hands it is kept here.
const saved: { name: string; mimeType: string; data?: string; text?: string }[] = [];
vi.mock("../../src/tools/files.js", async (orig) => ({
  ...(await orig<typeof import("../../src/tools/files.js")>()),
  putFile: async (_c: unknown, f: { name: string; mimeType: string; data?: string; text?: string }) => {
    saved.push(f);
    return { type: "resource_link", uri: `torii://files/s1/${f.name}`, name: f.name, mimeType: f.mimeType, size: f.data !== undefined ? atob(f.data).length : (f.text ?? "").length };
  },
}));

import { Ev } from "./listener-event.js";

const A = "http://127.0.0.1:4100";
const session: Record<string, unknown> = {};
const jar = [
  { name: "hsid", value: "HTTPONLY-tools-71b0", httpOnly: true },
  { name: "pref", value: "READABLE-tools-2e9c", httpOnly: false },
];
const jarAsked: string[] = [];
const frames = new Map<number, { url: string; documentId: string }>();
const wr = { onBeforeRequest: new Ev(), onSendHeaders: new Ev(), onBeforeRedirect: new Ev(), onCompleted: new Ev(), onErrorOccurred: new Ev() };
const nav = { onCommitted: new Ev() };
(globalThis as { chrome?: unknown }).chrome = {
  storage: {
    session: {
      get: async (k: string | null) => structuredClone(k === null ? session : { [k]: session[k] }),
      set: async (o: Record<string, unknown>) => void Object.assign(session, structuredClone(o)),
      remove: async (k: string) => void delete session[k],
    },
    local: { get: async () => ({ policy: { version: 1, rules: [{ pattern: "127.0.0.1:4100", captureSensitive: true }], actMode: false } }) },
    onChanged: new Ev(),
  },
  webRequest: wr,
  webNavigation: { ...nav, getFrame: async ({ tabId }: { tabId: number }) => frames.get(tabId) ?? null },
  tabs: { onRemoved: new Ev(), onReplaced: new Ev() },
  cookies: { getAll: async ({ url }: { url: string }) => (jarAsked.push(url), jar) },
  runtime: { getManifest: () => ({ version: "0.1.0" }) },
};

const SENTINEL = "SENTINEL-unit-41c2";
let T: typeof import("../../src/tools/capture/tools.js");
let L: typeof import("../../src/tools/capture/listen.js");
let S: typeof import("../../src/tools/capture/store.js");

const ctx = (id: string, tabId?: number) => ({ signal: new AbortController().signal, deadline: Date.now() + 60_000, gate: { signal: new AbortController().signal, owner: { id, label: id }, ...(tabId !== undefined ? { tabId } : {}) } });
const ev = (tabId: number, documentId: string, requestId: string, extra: Record<string, unknown> = {}) => ({ tabId, frameId: 0, documentId, requestId, url: `${A}/api/x?r=${requestId}`, method: "POST", type: "xmlhttprequest", timeStamp: Date.now(), ...extra });

function request(tabId: number, doc: string, id: string) {
  wr.onBeforeRequest.fire(ev(tabId, doc, id, { requestBody: { raw: [{ bytes: new TextEncoder().encode(`{"s":"${SENTINEL}"}`).buffer }] } }));
  wr.onSendHeaders.fire(ev(tabId, doc, id, { requestHeaders: [{ name: "X-Secret", value: SENTINEL }, { name: "Content-Type", value: "application/json" }] }));
  wr.onCompleted.fire(ev(tabId, doc, id, { statusCode: 200, statusLine: "HTTP/1.1 200 OK", fromCache: false, responseHeaders: [{ name: "Content-Type", value: "application/json" }] }));
}

beforeAll(async () => {
  T = await import("../../src/tools/capture/tools.js");
  L = await import("../../src/tools/capture/listen.js");
  S = await import("../../src/tools/capture/store.js");
  const { getPolicy } = await import("../../src/tools/safety.js");
  L.installCapture(getPolicy);
});

describe("capture tools", () => {
  it("a metadata capture asks the browser for no request header or body: the sentinel never reaches the worker", async () => {
    frames.set(1, { url: `${A}/page`, documentId: "D1" });
    const r = await T.captureStart.handler({ tabId: 1 }, ctx("s1", 1));
    const id = r.data?.captureId as string;
    expect(wr.onSendHeaders.ls).toHaveLength(0);
    expect(wr.onBeforeRequest.ls.map((l) => l.opts)).toEqual([undefined]);
    expect(wr.onCompleted.ls.map((l) => l.opts)).toEqual([["responseHeaders"]]);
    wr.onBeforeRequest.fire(ev(1, "D1", "m1"));
    wr.onCompleted.fire(ev(1, "D1", "m1", { statusCode: 201, statusLine: "HTTP/1.1 201 Created", fromCache: false, responseHeaders: [] }));
    // Another document of the same tab (a prerender, the next page) is never recorded.
    wr.onBeforeRequest.fire(ev(1, "OTHER", "m2"));
    const list = await T.captureList.handler({ captureId: id }, ctx("s1"));
    expect((list.data?.requests as { n: number; status: number }[]).map((x) => [x.n, x.status])).toEqual([[1, 201]]);
    await T.captureStop.handler({ captureId: id }, ctx("s1"));
    expect(wr.onBeforeRequest.ls).toHaveLength(0); // nothing runs: no listener at all
  });

  it("sensitive: listeners with headers and bodies; the export goes to the sandbox as a resource link", async () => {
    frames.set(2, { url: `${A}/page`, documentId: "D2" });
    const id = (await T.captureStart.handler({ tabId: 2, sensitive: true }, ctx("s1", 2))).data?.captureId as string;
    expect(wr.onSendHeaders.ls.map((l) => l.opts)).toEqual([["requestHeaders", "extraHeaders"]]);
    expect(wr.onBeforeRequest.ls.map((l) => l.opts)).toEqual([["requestBody"]]);
    request(2, "D2", "s1");
    saved.length = 0;
    const out = await T.captureExport.handler({ captureId: id, format: "http" }, ctx("s1"));
    expect(saved).toHaveLength(1);
    expect(saved[0]?.mimeType).toBe("message/http");
    const packet = atob(saved[0]?.data ?? "");
    expect(packet).toMatch(/^POST \/api\/x\?r=s1 HTTP\/1\.1\r\nHost: 127\.0\.0\.1:4100\r\nX-Secret: SENTINEL-unit-41c2\r\n/);
    expect((out as { resources?: { uri: string }[] }).resources?.[0]?.uri).toBe(`torii://files/s1/${saved[0]?.name}`);
    // The agent's context gets the summary and the link, never the bytes.
    expect(out.text).not.toContain(SENTINEL);
    expect(JSON.stringify(out.data)).not.toContain(SENTINEL);
    expect(out.data).toMatchObject({ entries: 1, saved: true, file: { name: saved[0]?.name } });
    // A HAR goes as UTF-8 text, the replay packet (bytes) as base64.
    await T.captureExport.handler({ captureId: id, format: "har" }, ctx("s1"));
    expect(saved[1]?.mimeType).toBe("application/json");
    expect(JSON.parse(saved[1]?.text ?? "").log.entries[0].request.headers).toContainEqual({ name: "X-Secret", value: SENTINEL });
  });

  it("a navigation of the captured frame to another origin stops it; its requests are not kept", async () => {
    frames.set(3, { url: `${A}/page`, documentId: "D3" });
    const id = (await T.captureStart.handler({ tabId: 3 }, ctx("s1", 3))).data?.captureId as string;
    wr.onBeforeRequest.fire(ev(3, "D3", "before"));
    nav.onCommitted.fire({ tabId: 3, frameId: 0, url: "http://127.0.0.1:4200/elsewhere", documentId: "D3b" });
    wr.onBeforeRequest.fire(ev(3, "D3b", "after", { url: "http://127.0.0.1:4200/api/new" }));
    const l = await T.captureList.handler({ captureId: id }, ctx("s1"));
    expect(l.data).toMatchObject({ running: false, stopReason: "origin_changed", entries: 1 });
    expect(JSON.stringify(l.data)).not.toContain("4200");
  });

  it("another session's id and an unknown id get the same not_found; an ended session's captures are forgotten", async () => {
    frames.set(4, { url: `${A}/page`, documentId: "D4" });
    const id = (await T.captureStart.handler({ tabId: 4, sensitive: true }, ctx("s2", 4))).data?.captureId as string;
    request(4, "D4", "q");
    const other = await T.captureExport.handler({ captureId: id }, ctx("s1")).catch((e: { code: string; message: string }) => e);
    const unknown = await T.captureExport.handler({ captureId: "zzzz" }, ctx("s1")).catch((e: { code: string; message: string }) => e);
    expect((other as { code: string }).code).toBe("not_found");
    expect((other as { message: string }).message.replace(id, "X")).toBe((unknown as { message: string }).message.replace("zzzz", "X"));
    await S.flush();
    expect(JSON.stringify(session)).toContain(id);
    await L.endSessionCaptures("s2");
    expect(JSON.stringify(session)).not.toContain(id);
    expect(S.sessionCaptures("s2")).toEqual([]);
    // Nothing goes on recording for it: a later request of its document holds no budget.
    const used = S.budget.used;
    request(4, "D4", "after");
    expect(S.budget.used).toBe(used);
    // Its tab's listeners go with it; the other tests' captures keep theirs.
    expect(wr.onBeforeRequest.ls.map((l) => l.tabId)).not.toContain(4);
    expect(wr.onSendHeaders.ls.map((l) => l.tabId)).not.toContain(4);
    expect(wr.onSendHeaders.ls.map((l) => l.tabId)).toContain(2);
  });

  it("sensitive without the origin's switch is refused before anything listens", async () => {
    frames.set(5, { url: "http://127.0.0.1:4300/page", documentId: "D5" });
    // The person's new policy (as the options page saves it): the origin allowed, its switch off.
    const { savePolicy } = await import("../../src/tools/safety.js");
    (globalThis as unknown as { chrome: { storage: { local: { set?: unknown } } } }).chrome.storage.local.set = async () => undefined;
    await savePolicy({ version: 1, rules: [{ pattern: "127.0.0.1:4300" }] });
    const e = await T.captureStart.handler({ tabId: 5, sensitive: true }, ctx("s3", 5)).catch((x: { code: string }) => x);
    expect((e as { code: string }).code).toBe("sensitive_not_allowed");
    expect(S.sessionCaptures("s3")).toEqual([]);
  });

  it("HttpOnly values off: the jar tells the cookies apart as the headers are recorded; the HttpOnly value and the token are never held", async () => {
    const { savePolicy } = await import("../../src/tools/safety.js");
    (globalThis as unknown as { chrome: { storage: { local: { set?: unknown } } } }).chrome.storage.local.set = async () => undefined;
    await savePolicy({ version: 1, rules: [{ pattern: "127.0.0.1:4400", captureSensitive: true, cookies: true, observe: true }] });
    frames.set(6, { url: "http://127.0.0.1:4400/page", documentId: "D6" });
    const id = (await T.captureStart.handler({ tabId: 6, sensitive: true }, ctx("s4", 6))).data?.captureId as string;
    const url = "http://127.0.0.1:4400/api";
    wr.onBeforeRequest.fire(ev(6, "D6", "j", { url, requestBody: { raw: [{ bytes: new TextEncoder().encode("BODY-tools-kept").buffer }] } }));
    wr.onSendHeaders.fire(ev(6, "D6", "j", { url, requestHeaders: [{ name: "Cookie", value: "pref=READABLE-tools-2e9c; hsid=HTTPONLY-tools-71b0" }, { name: "Authorization", value: "Bearer TOKEN-tools-5d" }] }));
    wr.onCompleted.fire(ev(6, "D6", "j", { url, statusCode: 200, statusLine: "HTTP/1.1 200 OK", fromCache: false, responseHeaders: [{ name: "Set-Cookie", value: "hsid=HTTPONLY-tools-71b0; HttpOnly" }] }));
    const rows = await vi.waitFor(async () => {
      const r = (await T.captureList.handler({ captureId: id }, ctx("s4"))).data?.requests as { headers?: number; withheld?: string[] }[];
      if (!r[0]?.headers) throw new Error("headers not recorded yet");
      return r;
    });
    expect(jarAsked).toEqual([url]);
    expect(rows[0]?.withheld?.sort()).toEqual(["authorization", "httpOnly"]);
    saved.length = 0;
    const out = await T.captureExport.handler({ captureId: id, format: "har" }, ctx("s4"));
    const har = saved[0]?.text ?? "";
    expect(har).toContain("pref=READABLE-tools-2e9c");
    expect(har).toContain("BODY-tools-kept");
    await S.flush();
    for (const where of [har, JSON.stringify(session), out.text, JSON.stringify(out.data)]) {
      expect(where).not.toContain("HTTPONLY-tools-71b0");
      expect(where).not.toContain("TOKEN-tools-5d");
    }
    expect(out.text).toMatch(/HttpOnly cookie values withheld: need this origin's "HttpOnly values" switch/);
  });
});

// What console_tail and network_tail keep of a tab (SECURITY I-65): the console from CDP events, the
// network's metadata from webRequest events, bodies from the Network domain only while recorded.
// Bounded, newest kept with the dropped counted, bodies only for text within their caps and
// budgets, nothing of a document off the list, never a request header, cookie or credential.
import { describe, expect, it } from "vitest";
import { MAX_BODY_QUEUE, MAX_BODY_READS } from "../../src/tools/observe/bodies.js";
import { BODY_CAP, ByteBudget, CONSOLE_CAP, NETWORK_CAP, TAB_BODY_BUDGET, TabCapture, cleanUrl, type Doc, type StoreDeps } from "../../src/tools/observe/store.js";

const A = "https://good.example";
const B = "https://evil.example";
const SECRET = "S3ntinel-Secret-obs-51d";

type Body = { body: string; base64Encoded: boolean };

function deps(o: Partial<StoreDeps> & { bodies?: Record<string, Body | Error>; docs?: Record<string, Doc> } = {}): StoreDeps {
  const docs: Record<string, Doc> = { docA: { origin: A, url: `${A}/app` }, docB: { origin: B, url: `${B}/ad` }, ...o.docs };
  return {
    docAllowed: (d: Doc) => d.origin === A,
    urlAllowed: (u: string) => u.startsWith(A),
    docOf: (id) => docs[id],
    readBody: async (id) => {
      const b = o.bodies?.[id];
      if (b instanceof Error) throw b;
      return b ?? { body: `body of ${id}`, base64Encoded: false };
    },
    global: new ByteBudget(4 * 1024 * 1024),
    bodyDelayMs: 0,
    ...o,
  };
}

function capture(d = deps(), bodies = true): TabCapture {
  const c = new TabCapture(1_000, d);
  c.seedFrames({ frame: { id: "top", url: `${A}/app`, securityOrigin: A }, childFrames: [{ frame: { id: "evil", url: `${B}/ad`, securityOrigin: B } }] });
  c.handle("Runtime.executionContextCreated", { context: { id: 1, origin: A, auxData: { isDefault: true, frameId: "top" } } });
  c.handle("Runtime.executionContextCreated", { context: { id: 2, origin: B, auxData: { isDefault: true, frameId: "evil" } } });
  c.handle("Runtime.executionContextCreated", { context: { id: 3, origin: A, auxData: { isDefault: false, frameId: "top", type: "isolated" } } });
  if (bodies) c.startBodies();
  return c;
}

interface FetchOpts {
  url?: string;
  frame?: string;
  doc?: string;
  mime?: string;
  size?: number;
  type?: string;
  /** webRequest's completion before the Network domain's (default after). */
  webFirst?: boolean;
  length?: number;
  /** The request's start is heard (network_tail hears it only while bodies are recorded). */
  start?: boolean;
}

/** One response as the browser reports it: webRequest's events and, when on, the Network domain's. */
function fetchOnce(c: TabCapture, id: string, o: FetchOpts = {}): void {
  const url = o.url ?? `${A}/api/${id}`;
  const evil = o.frame === "evil";
  const cdpType = o.type ?? "Fetch";
  const mime = o.mime ?? "application/json";
  const request = { requestId: `w${id}`, url, method: "POST", type: cdpType === "Fetch" || cdpType === "XHR" ? "xmlhttprequest" : cdpType.toLowerCase(), documentId: o.doc ?? (evil ? "docB" : "docA"), initiator: evil ? B : A, frameId: evil ? 3 : 0 };
  if (o.start !== false) c.net.before({ ...request, timeStamp: 2_000 });
  c.handle("Network.requestWillBeSent", {
    requestId: id,
    frameId: o.frame ?? "top",
    documentURL: evil ? `${B}/ad` : `${A}/app`,
    type: cdpType,
    timestamp: 10,
    wallTime: 2,
    request: { url, method: "POST", headers: { Authorization: `Bearer ${SECRET}`, Cookie: `sid=${SECRET}` }, postData: SECRET },
  });
  c.handle("Network.responseReceived", { requestId: id, type: cdpType, response: { url, status: 200, mimeType: mime, headers: { "Set-Cookie": `sid=${SECRET}` }, requestHeaders: { Cookie: SECRET } } });
  const web = () =>
    c.net.done({
      ...request,
      timeStamp: 2_250,
      statusCode: 200,
      responseHeaders: [{ name: "Content-Type", value: `${mime}; charset=utf-8` }, { name: "Set-Cookie", value: `sid=${SECRET}` }, ...(o.length !== undefined ? [{ name: "Content-Length", value: String(o.length) }] : [])],
    });
  if (o.webFirst) web();
  c.handle("Network.loadingFinished", { requestId: id, timestamp: 10.25, encodedDataLength: o.size ?? 20 });
  if (!o.webFirst) web();
}

/** A few turns of the event loop: the deferred body reads start and end. */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
};

describe("network capture", () => {
  it("bodies off: method, url, status, type and end from the request's end alone; no duration yet; the body omitted as not_recording, nothing read", async () => {
    let reads = 0;
    const c = capture(deps({ readBody: async () => (reads++, { body: "x", base64Encoded: false }) }), false);
    fetchOnce(c, "r1", { length: 33, start: false });
    fetchOnce(c, "r2", { start: false, frame: "evil" });
    await settle();
    const [e] = c.network.list();
    expect(e).toMatchObject({ ts: 2_250, method: "POST", url: `${A}/api/r1`, status: 200, type: "application/json", size: 33, origin: A, bodyOmitted: "not_recording", frameId: 0, documentId: "docA" });
    expect(e?.ms).toBeUndefined();
    // The end alone is judged like the whole request: the frame of B is off the list.
    expect(c.network.size).toBe(1);
    expect(c.droppedNetwork().offList).toBe(1);
    expect(e?.kind).toBeUndefined();
    expect(reads).toBe(0);
    expect(JSON.stringify(c.network.list())).not.toContain(SECRET);
  });

  it("bodies on: the body, fetch or XHR and the bytes received matched to the entry, whichever event comes first", async () => {
    const c = capture();
    fetchOnce(c, "r1");
    fetchOnce(c, "r2", { webFirst: true, type: "XHR" });
    await settle();
    const [e1, e2] = c.network.list();
    expect(e1).toMatchObject({ method: "POST", url: `${A}/api/r1`, status: 200, type: "application/json", kind: "fetch", size: 20, ms: 250, origin: A, body: "body of r1" });
    expect(e2).toMatchObject({ kind: "xhr", body: "body of r2" });
    expect(JSON.stringify(c.network.list())).not.toContain(SECRET);
  });

  it("a document learnt late is looked up; one never known is dropped", async () => {
    const c = capture(deps({ docOf: (id) => (id === "late" ? Promise.resolve({ origin: A, url: `${A}/late` }) : undefined) }), false);
    fetchOnce(c, "l1", { doc: "late" });
    fetchOnce(c, "u1", { doc: "unknown", url: `${A}/api/u1` });
    await settle();
    expect(c.network.list().map((e) => e.url)).toEqual([`${A}/api/l1`]);
    // The unknown document's request: its initiator (A) alone would pass, but its frame's document must be known.
    expect(c.droppedNetwork().offList).toBe(1);
  });

  it("10,000 responses: bounded, newest kept, the dropped counted; bodies past the read queue are busy", async () => {
    const c = capture();
    for (let i = 0; i < 10_000; i++) fetchOnce(c, `r${i}`);
    expect(c.network.size).toBe(NETWORK_CAP);
    expect(c.network.list()[0]?.url).toBe(`${A}/api/r${10_000 - NETWORK_CAP}`);
    expect(c.network.list().at(-1)?.url).toBe(`${A}/api/r9999`);
    expect(c.droppedNetwork()).toEqual({ overflow: 10_000 - NETWORK_CAP, offList: 0, unfinished: 0 });
    await settle();
    const kept = c.network.list();
    expect(kept.filter((e) => e.bodyOmitted === "busy").length).toBe(NETWORK_CAP);
    // The few reads queued first belong to entries long fallen off the ring: nothing was kept.
    expect(c.heldBodyBytes).toBe(0);
    // Reads free up again once the flood is over.
    fetchOnce(c, "late");
    await settle();
    expect(c.network.list().at(-1)?.body).toBe("body of late");
  });

  it("unfinished requests are bounded too", () => {
    const c = capture();
    for (let i = 0; i < 1_500; i++) c.net.before({ requestId: `p${i}`, url: `${A}/x`, method: "GET", type: "xmlhttprequest", documentId: "docA", timeStamp: 2_000 });
    expect(c.droppedNetwork().unfinished).toBe(500);
  });

  it("a binary body is omitted with its reason, by type or by the browser's encoding", async () => {
    const c = capture(deps({ bodies: { b2: { body: "AAEC", base64Encoded: true } } }));
    fetchOnce(c, "b1", { mime: "image/png" });
    fetchOnce(c, "b2", { mime: "text/plain" });
    await settle();
    expect(c.network.list().map((e) => [e.body, e.bodyOmitted])).toEqual([
      [undefined, "binary"],
      [undefined, "binary"],
    ]);
  });

  it("a body over the cap is omitted as too_large, by its size or once read", async () => {
    const c = capture(deps({ bodies: { t2: { body: "x".repeat(BODY_CAP + 1), base64Encoded: false } } }));
    fetchOnce(c, "t1", { size: BODY_CAP + 1 });
    fetchOnce(c, "t2", { size: 100 });
    await settle();
    expect(c.network.list().map((e) => e.bodyOmitted)).toEqual(["too_large", "too_large"]);
    expect(c.heldBodyBytes).toBe(0);
  });

  it("a body the browser no longer keeps says so", async () => {
    const c = capture(deps({ bodies: { n1: new Error("No resource with given identifier found") } }));
    fetchOnce(c, "n1");
    await settle();
    expect(c.network.list()[0]?.bodyOmitted).toBe("not_kept");
  });

  it("an entry whose body never comes stops waiting after a while", async () => {
    const c = capture();
    c.net.before({ requestId: "wsw", url: `${A}/api/sw`, method: "GET", type: "xmlhttprequest", documentId: "docA", initiator: A, timeStamp: 2_000 });
    c.net.done({ requestId: "wsw", url: `${A}/api/sw`, timeStamp: 2_100, statusCode: 200 });
    const [e] = c.network.list();
    expect(e?.bodyReady).toBeDefined();
    c.net.expireWaiting(Date.now());
    expect(e?.bodyReady).toBeDefined();
    c.net.expireWaiting(Date.now() + 60_000);
    expect(e?.bodyReady).toBeUndefined();
    expect(e?.bodyOmitted).toBe("not_kept");
  });

  it("recording stops: bodies waiting are read first, requests in flight get none", async () => {
    let reads = 0;
    const c = capture(deps({ bodyDelayMs: 60_000, readBody: async (id) => (reads++, { body: `body of ${id}`, base64Encoded: false }) }));
    fetchOnce(c, "s1");
    c.net.before({ requestId: "wfly", url: `${A}/api/fly`, method: "GET", type: "xmlhttprequest", documentId: "docA", initiator: A, timeStamp: 2_000 });
    await c.stopBodies();
    expect(c.bodies).toBeUndefined();
    c.net.done({ requestId: "wfly", url: `${A}/api/fly`, timeStamp: 2_100, statusCode: 200 });
    expect(c.network.list().map((e) => [e.url, e.body, e.bodyOmitted])).toEqual([
      [`${A}/api/s1`, "body of s1", undefined],
      [`${A}/api/fly`, undefined, "not_recording"],
    ]);
    expect(reads).toBe(1);
    // Recording again: a body read for a request that expected none is never handed to a later one.
    c.startBodies();
    fetchOnce(c, "s2");
    c.bodies?.flush();
    await settle();
    expect(c.network.list().at(-1)).toMatchObject({ url: `${A}/api/s2`, body: "body of s2" });
  });
  it("bodies stay within the tab's and the global budgets, the oldest giving way", async () => {
    const big = "y".repeat(BODY_CAP);
    const bodies: Record<string, Body> = {};
    for (let i = 0; i < 40; i++) bodies[`k${i}`] = { body: big, base64Encoded: false };
    const g = new ByteBudget(TAB_BODY_BUDGET * 2);
    const c = capture(deps({ bodies, global: g }));
    for (let i = 0; i < 40; i++) {
      fetchOnce(c, `k${i}`);
      await settle();
    }
    expect(c.heldBodyBytes).toBeLessThanOrEqual(TAB_BODY_BUDGET);
    const l = c.network.list();
    expect(l.at(-1)?.body).toBe(big);
    expect(l[0]?.bodyOmitted).toBe("budget");
    // A second tab shares the global budget: together they never hold more than it.
    const c2 = capture(deps({ bodies, global: g }));
    for (let i = 0; i < 40; i++) {
      fetchOnce(c2, `k${i}`);
      await settle();
    }
    expect(g.used).toBeLessThanOrEqual(g.cap);
    c.dispose();
    c2.dispose();
    expect(g.used).toBe(0);
  });

  it("a response from a frame of a disallowed origin, or to a URL off the list, is never kept", async () => {
    let reads = 0;
    const c = capture(deps({ docs: { docKid: { origin: B, url: `${B}/x` } }, readBody: async () => (reads++, { body: "x", base64Encoded: false }) }));
    fetchOnce(c, "e1", { frame: "evil", url: `${A}/api/from-evil` });
    fetchOnce(c, "e2", { url: `${B}/collect` });
    // A frame that navigated to the disallowed origin is judged by its new document (even when its initiator passes).
    c.handle("Page.frameNavigated", { frame: { id: "kid", parentId: "top", url: `${B}/x`, securityOrigin: B } });
    fetchOnce(c, "e3", { frame: "kid", doc: "docKid" });
    await settle();
    expect(c.network.size).toBe(0);
    expect(c.droppedNetwork().offList).toBe(3);
    // Nor is a body read for any of them.
    expect(reads).toBe(0);
  });

  it("only fetch and XHR are listed", () => {
    const c = capture();
    fetchOnce(c, "i1", { type: "Image", mime: "image/png" });
    fetchOnce(c, "s1", { type: "Script", mime: "text/javascript" });
    expect(c.network.size).toBe(0);
  });

  it("a URL loses its credentials", () => {
    expect(cleanUrl(`https://user:${SECRET}@good.example/p?q=1`)).toBe("https://good.example/p?q=1");
  });
});

describe("console capture", () => {
  it("keeps errors, warnings, assertions and uncaught exceptions of allowed documents", () => {
    const c = capture();
    c.handle("Runtime.consoleAPICalled", { type: "error", executionContextId: 1, timestamp: 2_000, args: [{ type: "string", value: "boom" }, { type: "number", value: 42 }] });
    c.handle("Runtime.consoleAPICalled", { type: "warning", executionContextId: 1, timestamp: 2_001, args: [{ type: "object", subtype: "error", description: "Error: careful\n    at f" }] });
    c.handle("Runtime.consoleAPICalled", { type: "log", executionContextId: 1, timestamp: 2_002, args: [{ type: "string", value: "chatter" }] });
    c.handle("Runtime.consoleAPICalled", { type: "assert", executionContextId: 1, timestamp: 2_003, args: [{ type: "string", value: "x > 1" }] });
    c.handle("Runtime.exceptionThrown", { timestamp: 2_004, exceptionDetails: { text: "Uncaught", executionContextId: 1, exception: { type: "object", description: "TypeError: nope" } } });
    expect(c.console.list().map((e) => [e.level, e.source, e.text, e.origin])).toEqual([
      ["error", "console", "boom 42", A],
      ["warning", "console", "Error: careful\n    at f", A],
      ["error", "console", "Assertion failed: x > 1", A],
      ["error", "exception", "Uncaught TypeError: nope", A],
    ]);
  });

  it("drops what a disallowed frame, an isolated world or an unknown context logs, and what came before the first call", () => {
    const c = capture();
    c.handle("Runtime.consoleAPICalled", { type: "error", executionContextId: 2, timestamp: 2_000, args: [{ type: "string", value: "evil says" }] });
    c.handle("Runtime.exceptionThrown", { timestamp: 2_000, exceptionDetails: { text: "Uncaught", executionContextId: 2 } });
    c.handle("Runtime.consoleAPICalled", { type: "error", executionContextId: 3, timestamp: 2_000, args: [{ type: "string", value: "extension" }] });
    c.handle("Runtime.consoleAPICalled", { type: "error", executionContextId: 99, timestamp: 2_000, args: [{ type: "string", value: "who" }] });
    c.handle("Runtime.consoleAPICalled", { type: "error", executionContextId: 1, timestamp: 999, args: [{ type: "string", value: "replayed" }] });
    expect(c.console.size).toBe(0);
    expect(c.droppedConsole().offList).toBe(4);
  });

  it("the browser's log: by the request it is about, else only while every frame may be kept", () => {
    const c = capture();
    c.handle("Network.requestWillBeSent", { requestId: "img", frameId: "evil", documentURL: `${B}/ad`, type: "Image", request: { url: `${A}/pixel`, method: "GET" } });
    c.handle("Log.entryAdded", { entry: { level: "error", source: "network", text: "Failed to load resource: 404", timestamp: 2_000, networkRequestId: "img" } });
    c.handle("Log.entryAdded", { entry: { level: "warning", source: "violation", text: "slow handler", timestamp: 2_000 } });
    expect(c.console.size).toBe(0);
    c.handle("Page.frameDetached", { frameId: "evil" });
    c.handle("Log.entryAdded", { entry: { level: "warning", source: "violation", text: "slow handler", timestamp: 2_000 } });
    c.handle("Network.requestWillBeSent", { requestId: "img2", frameId: "top", documentURL: `${A}/app`, type: "Image", request: { url: `${A}/pixel`, method: "GET" } });
    c.handle("Log.entryAdded", { entry: { level: "error", source: "network", text: "Failed to load resource: 404", timestamp: 2_000, networkRequestId: "img2" } });
    expect(c.console.list().map((e) => e.text)).toEqual(["slow handler", "Failed to load resource: 404"]);
  });

  it("a flood of errors: bounded, newest kept, the dropped counted", () => {
    const c = capture();
    for (let i = 0; i < 10_000; i++) c.handle("Runtime.consoleAPICalled", { type: "error", executionContextId: 1, timestamp: 2_000 + i, args: [{ type: "string", value: `e${i}` }] });
    expect(c.console.size).toBe(CONSOLE_CAP);
    expect(c.console.list().at(-1)?.text).toBe("e9999");
    expect(c.droppedConsole().overflow).toBe(10_000 - CONSOLE_CAP);
  });
});

it("bodies are read a moment after their response, at most MAX_BODY_READS at once, at once when flushed", async () => {
  let open = 0;
  let most = 0;
  const c = capture(
    deps({
      readBody: async () => {
        open++;
        most = Math.max(most, open);
        await settle();
        open--;
        return { body: "ok", base64Encoded: false };
      },
    }),
  );
  for (let i = 0; i < 20; i++) fetchOnce(c, `c${i}`);
  await Promise.all(c.network.list().map((e) => e.bodyReady));
  expect(most).toBe(MAX_BODY_READS);
  expect(c.network.list().filter((e) => e.body === "ok").length).toBe(MAX_BODY_QUEUE);
  expect(c.network.list().filter((e) => e.bodyOmitted === "busy").length).toBe(20 - MAX_BODY_QUEUE);
  // With the default delay nothing is read until it passes, or until a call flushes the queue.
  let reads = 0;
  const d = capture(deps({ bodyDelayMs: undefined, readBody: async () => (reads++, { body: "ok", base64Encoded: false }) }));
  fetchOnce(d, "d1");
  await settle();
  expect(reads).toBe(0);
  d.bodies?.flush();
  await d.network.list()[0]?.bodyReady;
  expect(reads).toBe(1);
  expect(d.network.list()[0]?.body).toBe("ok");
  d.dispose();
});

// The capture recorder and its exports (HAR, HTTP/1.1 replay), as pure logic: bounds, caps,
// binary and truncated bodies, the metadata-only default and the sentinel secret.
import { describe, expect, it } from "vitest";
import { BODY_CAP, METADATA_CAP, SENSITIVE_BUDGET, SENSITIVE_CAP, type Capture } from "../../src/tools/capture/model.js";
import { fromB64 } from "../../src/shared/b64.js";
import { onDone, onHeaders, onRedirect, onRequest, onResponse, type Budget, type Destination, type Judge } from "../../src/tools/capture/record.js";
import { buildExport, summaryText, withCurrentPolicy } from "../../src/tools/capture/export.js";
import { toHar } from "../../src/tools/capture/har.js";
import { toReplay } from "../../src/tools/capture/replay.js";

const SENTINEL = "SENTINEL-7f3a9c-secret";
const ORIGIN = "https://shop.example";

function capture(sensitive: boolean, max = sensitive ? SENSITIVE_CAP : METADATA_CAP): Capture {
  return { id: "c1", session: "s1", tabId: 5, frameId: 0, documentId: "D1", origin: ORIGIN, url: `${ORIGIN}/app`, sensitive, max, startedAt: Date.UTC(2026, 0, 2, 3, 4, 5), entries: [], dropped: 0, ignored: 0, seq: 0, held: 0 };
}

/** shop.example is allowed with the capture switch, cdn.example allowed without it, the rest blocked. */
const ALL: Destination = { allowed: true, sensitive: true, bodies: true, cookies: "all", credentials: true };
const NONE: Destination = { allowed: false, sensitive: false, bodies: false, cookies: "none", credentials: false };
const judge: Judge = (url) => {
  const o = URL.canParse(url) ? new URL(url).origin : "";
  if (o === ORIGIN) return ALL;
  if (o === "https://cdn.example") return { ...NONE, allowed: true };
  return NONE;
};

const enc = (s: string) => new TextEncoder().encode(s);

/** One whole request: start (with body), headers, response, completion. */
function request(c: Capture, b: Budget, i: number, o: { url?: string; method?: string; body?: Uint8Array; headers?: [string, string][]; t?: number } = {}) {
  const id = `r${i}`;
  const t = o.t ?? 1000 + i;
  onRequest(c, { requestId: id, url: o.url ?? `${ORIGIN}/api/item?i=${i}`, method: o.method ?? (o.body ? "POST" : "GET"), type: "xmlhttprequest", timeStamp: t, requestBody: o.body ? { raw: [{ bytes: o.body }] } : undefined }, judge, b);
  onHeaders(c, id, (o.headers ?? [["Accept", "*/*"], ["X-Secret", SENTINEL], ["Cookie", `sid=${SENTINEL}`]]).map(([name, value]) => ({ name, value })), b, judge);
  onResponse(c, id, 200, "HTTP/1.1 200 OK", [{ name: "Content-Type", value: "application/json; charset=utf-8" }, { name: "Content-Length", value: "42" }]);
  onDone(c, id, t + 7, 200, false);
}

const dump = (c: Capture, j: Judge = judge) => {
  const har = buildExport(c, j, "har", "0.1.0");
  return `${JSON.stringify(c)}\n${new TextDecoder().decode(har.file.bytes)}\n${JSON.stringify(har.summary)}\n${summaryText(har.summary, "saved")}`;
};

describe("capture recorder", () => {
  it("metadata by default: a sentinel secret in a request header, cookie or body is never kept or exported", () => {
    const c = capture(false);
    const b: Budget = { used: 0 };
    request(c, b, 1, { body: enc(`{"password":"${SENTINEL}"}`) });
    request(c, b, 2);
    expect(c.entries).toHaveLength(2);
    expect(c.entries[0]).toMatchObject({ method: "POST", status: 200, mimeType: "application/json", size: 42, url: `${ORIGIN}/api/item?i=1` });
    expect(c.entries[0]?.headers).toBeUndefined();
    expect(c.entries[0]?.body).toBeUndefined();
    expect(b.used).toBe(0);
    expect(dump(c)).not.toContain(SENTINEL);
    // A replay needs the headers a metadata capture never has: refused, naming the way on.
    expect(() => buildExport(c, judge, "http", "0.1.0")).toThrow(/metadata only/);
  });

  it("10,000 requests in a second: bounded at the cap, the newest kept, the dropped counted", () => {
    const c = capture(false);
    const b: Budget = { used: 0 };
    const t0 = performance.now();
    for (let i = 1; i <= 10_000; i++) request(c, b, i, { t: 1000 + i / 10 });
    const ms = performance.now() - t0;
    expect(c.entries).toHaveLength(METADATA_CAP);
    expect(c.dropped).toBe(10_000 - METADATA_CAP);
    expect(c.entries[0]?.n).toBe(10_000 - METADATA_CAP + 1);
    expect(c.entries.at(-1)?.n).toBe(10_000);
    const { summary } = buildExport(c, judge, "har", "0.1.0");
    expect(summary).toMatchObject({ entries: METADATA_CAP, dropped: 9_900 });
    expect(summaryText(summary, "saved")).toContain("9900 older requests were dropped");
    console.log(`10,000 requests recorded in ${ms.toFixed(1)} ms`);
    // O(1) a request: a quadratic recorder would take minutes here, not seconds.
    expect(ms).toBeLessThan(5000);
  });

  it("sensitive: headers (Cookie included) and a text body are kept and exported", () => {
    const c = capture(true);
    const b: Budget = { used: 0 };
    request(c, b, 1, { body: enc('{"q":"shoes"}'), headers: [["Content-Type", "application/json"], ["Cookie", "sid=abc; theme=dark"]] });
    const { har } = toHar(withCurrentPolicy(c, judge), { creatorVersion: "0.1.0" });
    const e = (har.log as { entries: Record<string, any>[] }).entries[0]!;
    expect(e.request.headers).toEqual([{ name: "Content-Type", value: "application/json" }, { name: "Cookie", value: "sid=abc; theme=dark" }]);
    expect(e.request.cookies).toEqual([{ name: "sid", value: "abc" }, { name: "theme", value: "dark" }]);
    expect(e.request.postData).toEqual({ mimeType: "application/json", text: '{"q":"shoes"}' });
    expect(e.request.queryString).toEqual([{ name: "i", value: "1" }]);
    expect(e.response).toMatchObject({ status: 200, statusText: "OK", content: { size: 42, mimeType: "application/json" } });
    expect(e.comment).toBeUndefined();
    const r = toReplay(withCurrentPolicy(c, judge));
    expect(new TextDecoder().decode(r.bytes)).toBe(
      "POST /api/item?i=1 HTTP/1.1\r\nHost: shop.example\r\nContent-Type: application/json\r\nCookie: sid=abc; theme=dark\r\nContent-Length: 13\r\n\r\n" + '{"q":"shoes"}',
    );
    expect(r.warnings).toEqual([]);
  });

  it("a binary body is kept byte for byte: base64 in the HAR, raw in the replay packet", () => {
    const c = capture(true);
    const b: Budget = { used: 0 };
    const bin = new Uint8Array([0, 1, 2, 0xff, 0xfe, 0x80, 10, 13, 0]);
    request(c, b, 1, { body: bin, headers: [["Content-Type", "application/octet-stream"]] });
    expect(c.entries[0]?.body).toMatchObject({ binary: true, size: 9, kept: 9 });
    const { har } = toHar(withCurrentPolicy(c, judge), { creatorVersion: "0.1.0" });
    const e = (har.log as { entries: Record<string, any>[] }).entries[0]!;
    expect(e.request.postData._encoding).toBe("base64");
    expect(fromB64(e.request.postData.text)).toEqual(bin);
    expect(e.comment).toContain("binary request body");
    const pkt = toReplay(withCurrentPolicy(c, judge)).bytes;
    expect(pkt.subarray(pkt.length - bin.length)).toEqual(bin);
    expect(new TextDecoder().decode(pkt)).toContain("Content-Length: 9\r\n\r\n");
  });

  it("a body over the 64 KiB cap is truncated, framed by what was kept, and every export warns", () => {
    const c = capture(true);
    const b: Budget = { used: 0 };
    const big = enc("x".repeat(BODY_CAP + 5000));
    request(c, b, 1, { body: big, headers: [["Content-Type", "text/plain"]] });
    expect(c.entries[0]?.body).toMatchObject({ size: BODY_CAP + 5000, kept: BODY_CAP, omitted: "too_large" });
    const har = buildExport(c, judge, "har", "0.1.0");
    expect(har.summary.warned).toBe(1);
    expect(har.summary.warnings[0]?.warning).toBe(`request body truncated: ${BODY_CAP} of ${BODY_CAP + 5000} bytes kept (cap ${BODY_CAP})`);
    expect(new TextDecoder().decode(har.file.bytes)).toContain("request body truncated");
    const http = buildExport(c, judge, "http", "0.1.0");
    expect(new TextDecoder().decode(http.file.bytes)).toContain(`Content-Length: ${BODY_CAP}\r\n\r\nxxx`);
    expect(http.file.bytes.length).toBeLessThan(BODY_CAP + 200);
    expect(summaryText(http.summary, "saved")).toMatch(/WARNING: 1 requests are not whole[\s\S]*#1: request body truncated/);
  });

  it("a sensitive capture keeps nothing sensitive for a destination without the switch, and names no blocked host", () => {
    const c = capture(true);
    const b: Budget = { used: 0 };
    request(c, b, 1, { url: "https://cdn.example/x", body: enc(SENTINEL) });
    request(c, b, 2, { url: "https://tracker.example/pixel?id=42", body: enc(SENTINEL) });
    expect(c.entries[0]).toMatchObject({ url: "https://cdn.example/x", headersOmitted: "destination_off" });
    expect(c.entries[1]).toMatchObject({ url: "", blocked: true });
    const all = dump(c);
    expect(all).not.toContain(SENTINEL);
    expect(all).not.toContain("tracker.example");
    expect(() => buildExport(c, judge, "http", "0.1.0")).toThrow(/no request with captured headers/);
  });

  it("a switch turned off after capturing: the export carries metadata only", () => {
    const c = capture(true);
    const b: Budget = { used: 0 };
    request(c, b, 1);
    expect(JSON.stringify(c)).toContain(SENTINEL);
    const off = withCurrentPolicy(c, (u) => ({ ...judge(u), sensitive: false }));
    expect(dump(off)).not.toContain(SENTINEL);
  });

  it("redirect hops are entries of their own; failures keep the net error", () => {
    const c = capture(false);
    const b: Budget = { used: 0 };
    onRequest(c, { requestId: "r", url: `${ORIGIN}/old`, method: "GET", type: "xmlhttprequest", timeStamp: 1 }, judge, b);
    onRedirect(c, "r", 302, "HTTP/1.1 302 Found", 2);
    onRequest(c, { requestId: "r", url: `${ORIGIN}/new`, method: "GET", type: "xmlhttprequest", timeStamp: 3 }, judge, b);
    onDone(c, "r", 5, 200, true);
    onRequest(c, { requestId: "f", url: `${ORIGIN}/down`, method: "GET", type: "xmlhttprequest", timeStamp: 6 }, judge, b);
    onDone(c, "f", 9, undefined, false, "net::ERR_CONNECTION_REFUSED");
    expect(c.entries.map((e) => [e.url.slice(ORIGIN.length), e.status, e.redirected, e.fromCache, e.error])).toEqual([
      ["/old", 302, true, undefined, undefined],
      ["/new", 200, undefined, true, undefined],
      ["/down", undefined, undefined, undefined, "net::ERR_CONNECTION_REFUSED"],
    ]);
  });

  it("the replay packet cannot be split by a header value or a path, and drops framing headers it rebuilds", () => {
    const c = capture(true);
    const b: Budget = { used: 0 };
    request(c, b, 1, { body: enc("a=1"), headers: [["X-Evil", "1\r\nX-Injected: yes"], ["Transfer-Encoding", "chunked"], ["Content-Length", "999"], ["Host", "other.example"]] });
    const text = new TextDecoder().decode(toReplay(withCurrentPolicy(c, judge)).bytes);
    expect(text).not.toMatch(/\r\nX-Injected/);
    expect(text).not.toContain("chunked");
    expect(text).not.toContain("999");
    expect(text).toContain("Host: shop.example\r\n");
    expect(text.split("\r\n\r\n")).toHaveLength(2);
  });

  it("form fields: urlencoded rebuilt for the replay, multipart warned and left without a body", () => {
    const c = capture(true);
    const b: Budget = { used: 0 };
    onRequest(c, { requestId: "u", url: `${ORIGIN}/f`, method: "POST", type: "xmlhttprequest", timeStamp: 1, requestBody: { formData: { a: ["1"], b: ["x y"] } } }, judge, b);
    onHeaders(c, "u", [{ name: "Content-Type", value: "application/x-www-form-urlencoded" }], b, judge);
    onRequest(c, { requestId: "m", url: `${ORIGIN}/f`, method: "POST", type: "xmlhttprequest", timeStamp: 2, requestBody: { formData: { a: ["1"] } } }, judge, b);
    onHeaders(c, "m", [{ name: "Content-Type", value: "multipart/form-data; boundary=zz" }], b, judge);
    const r = toReplay(withCurrentPolicy(c, judge));
    expect(new TextDecoder().decode(r.bytes)).toContain("Content-Length: 9\r\n\r\na=1&b=x+y");
    expect(r.warnings).toEqual([{ n: 2, warning: "request body omitted: a multipart body: the browser gave its fields, not its bytes" }]);
  });

  it("all captures together stay within the byte budget; a dropped entry gives its bytes back", () => {
    const c = capture(true, 3);
    const b: Budget = { used: SENSITIVE_BUDGET - 100 };
    request(c, b, 1, { body: enc("y".repeat(1000)), headers: [["A", "b"]] });
    expect(c.entries[0]?.body).toMatchObject({ omitted: "budget", size: 1000 });
    expect(b.used).toBeLessThanOrEqual(SENSITIVE_BUDGET);
    b.used = 0;
    c.held = 0;
    c.entries = [];
    for (let i = 0; i < 10; i++) request(c, b, i, { body: enc("z".repeat(100)), headers: [["A", "b"]] });
    expect(b.used).toBe(c.held);
    expect(c.held).toBe(3 * (100 + 1 + 1 + 4));
  });
});

describe("export of 200 sensitive requests", () => {
  it("builds HAR and replay packets within the 200 ms target (median of 7)", () => {
    const c = capture(true);
    const b: Budget = { used: 0 };
    for (let i = 0; i < SENSITIVE_CAP; i++) request(c, b, i, { body: enc(`{"i":${i},"pad":"${"p".repeat(4000)}"}`), headers: [["Content-Type", "application/json"], ["Cookie", "sid=1"], ["User-Agent", "x".repeat(120)]] });
    // Wall time and CPU time: on a machine shared by many the wall clock also counts other
    // processes' turns, so the bound is on the CPU this export itself used.
    const wall: Record<string, number[]> = { har: [], http: [] };
    const cpu: Record<string, number[]> = { har: [], http: [] };
    for (let k = 0; k < 7; k++) {
      for (const f of ["har", "http"] as const) {
        const t0 = performance.now();
        const c0 = process.cpuUsage();
        const { summary } = buildExport(c, judge, f, "0.1.0");
        const dc = process.cpuUsage(c0);
        wall[f]!.push(performance.now() - t0);
        cpu[f]!.push((dc.user + dc.system) / 1000);
        expect(summary.entries).toBe(SENSITIVE_CAP);
      }
    }
    const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)] as number;
    console.log(
      `export of ${SENSITIVE_CAP} requests: HAR median ${median(wall.har!).toFixed(1)} ms wall / ${median(cpu.har!).toFixed(1)} ms CPU, ` +
        `HTTP median ${median(wall.http!).toFixed(1)} ms wall / ${median(cpu.http!).toFixed(1)} ms CPU`,
    );
    expect(median(cpu.har!)).toBeLessThan(200);
    expect(median(cpu.http!)).toBeLessThan(200);
  });
});

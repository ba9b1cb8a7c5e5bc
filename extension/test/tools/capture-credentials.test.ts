// A sensitive capture honours every switch the matching read tool honours (SECURITY I-75), as pure
// logic: HttpOnly cookie values, Authorization and bodies whose switch is off are never recorded,
// those recorded are withheld again by an export once the switch is off, Proxy-Authorization and
// response headers (Set-Cookie) are never kept, and each withheld value leaves a marker.
import { describe, expect, it } from "vitest";
import { captureKeeps, defaultPolicy, judgeUrl, permissivePolicy, withRule, type OriginRule } from "../../src/policy/policy.js";
import { MARKER, parseCookieHeader, recordHeaders, type JarCookie } from "../../src/tools/capture/credentials.js";
import { buildExport, summaryText, withCurrentPolicy } from "../../src/tools/capture/export.js";
import { HEADERS_CAP, SENSITIVE_CAP, type Capture } from "../../src/tools/capture/model.js";
import { headersFor, onDone, onHeaders, onRedirect, onRequest, onResponse, putHeaders, release, type Budget, type Destination, type Judge } from "../../src/tools/capture/record.js";

const ORIGIN = "https://shop.example";
const HTTPONLY = "HTTPONLY-unit-5c1e";
const READABLE = "READABLE-unit-88a0";
const TOKEN = "TOKEN-unit-3f7d";
const PROXY = "PROXY-unit-b2c4";
const BODY = "BODY-unit-90e1";
const JAR: JarCookie[] = [
  { name: "hsid", value: HTTPONLY, httpOnly: true },
  { name: "pref", value: READABLE, httpOnly: false },
];
const HEADERS = [
  { name: "Content-Type", value: "text/plain" },
  { name: "Cookie", value: `pref=${READABLE}; hsid=${HTTPONLY}` },
  { name: "Authorization", value: `Bearer ${TOKEN}` },
  { name: "Proxy-Authorization", value: `Basic ${PROXY}` },
];

/** The destination's switches, as captureKeeps derives them from the origin's entry. */
const keeps = (rule: Partial<OriginRule>): Destination => captureKeeps(judgeUrl(withRule(defaultPolicy(), { pattern: "shop.example", ...rule }), `${ORIGIN}/api`));
const ALL = keeps({ captureSensitive: true, cookies: true, cookiesHttpOnly: true, observe: true });
const at = (d: Destination): Judge => (url) => (url.startsWith(ORIGIN) ? d : keeps({}));

function capture(): Capture {
  return { id: "c1", session: "s1", tabId: 5, frameId: 0, documentId: "D1", origin: ORIGIN, url: `${ORIGIN}/app`, sensitive: true, max: SENSITIVE_CAP, startedAt: 0, entries: [], dropped: 0, ignored: 0, seq: 0, held: 0 };
}

/** One request recorded under `d`, the jar at hand, with a Set-Cookie in its response. */
function record(d: Destination, jar: JarCookie[] | "no jar" = JAR): { c: Capture; b: Budget } {
  const c = capture();
  const b: Budget = { used: 0 };
  onRequest(c, { requestId: "r", url: `${ORIGIN}/api`, method: "POST", type: "xmlhttprequest", timeStamp: 1, requestBody: { raw: [{ bytes: new TextEncoder().encode(BODY) }] } }, at(d), b);
  onHeaders(c, "r", HEADERS, b, at(d), jar === "no jar" ? undefined : jar);
  onResponse(c, "r", 200, "HTTP/1.1 200 OK", [{ name: "Set-Cookie", value: `hsid=${HTTPONLY}; HttpOnly` }, { name: "Content-Type", value: "application/json" }]);
  onDone(c, "r", 2, 200, false);
  return { c, b };
}

const exported = (c: Capture, d: Destination) =>
  (["har", "http"] as const).map((f) => {
    const { file, summary } = buildExport(c, at(d), f, "0.1.0");
    return { f, text: new TextDecoder().decode(file.bytes), summary: summaryText(summary, "saved") };
  });

describe("the switches a capture honours (captureKeeps)", () => {
  it("each value needs its read tool's switch beside the capture switch, never permissive mode", () => {
    expect(keeps({ captureSensitive: true })).toEqual({ allowed: true, sensitive: true, bodies: false, cookies: "none", credentials: false });
    expect(keeps({ captureSensitive: true, cookies: true })).toMatchObject({ cookies: "readable", credentials: false });
    // HttpOnly values count only beside Cookies, as for the cookies tool.
    expect(keeps({ captureSensitive: true, cookiesHttpOnly: true })).toMatchObject({ cookies: "none", credentials: false });
    expect(ALL).toEqual({ allowed: true, sensitive: true, bodies: true, cookies: "all", credentials: true });
    // The read switches alone give a capture nothing.
    expect(keeps({ cookies: true, cookiesHttpOnly: true, observe: true })).toEqual({ allowed: true, sensitive: false, bodies: false, cookies: "none", credentials: false });
    expect(captureKeeps(judgeUrl(permissivePolicy(), `${ORIGIN}/`))).toEqual({ allowed: true, sensitive: false, bodies: false, cookies: "none", credentials: false });
  });
});

describe("recording (SECURITY I-75)", () => {
  it("HttpOnly off: the HttpOnly value, the token and the proxy credential are never recorded; the readable cookie is", () => {
    const { c, b } = record(keeps({ captureSensitive: true, cookies: true, observe: true }));
    const held = JSON.stringify(c);
    for (const v of [HTTPONLY, TOKEN, PROXY]) expect(held).not.toContain(v);
    expect(c.entries[0]?.cookies).toEqual([{ name: "pref", value: READABLE, readable: true }, { name: "hsid" }]);
    expect(c.entries[0]?.headers).toEqual([["Content-Type", "text/plain"], ["Cookie", ""], ["Authorization", ""], ["Proxy-Authorization", ""]]);
    expect(c.entries[0]?.body?.text).toBe(BODY);
    expect(b.used).toBe(c.held);
    for (const { f, text, summary } of exported(c, keeps({ captureSensitive: true, cookies: true, observe: true }))) {
      for (const v of [HTTPONLY, TOKEN, PROXY]) expect(text, f).not.toContain(v);
      expect(text, f).toContain(`pref=${READABLE}; hsid=${MARKER.httpOnly}`.replace(/"/g, f === "har" ? '\\"' : '"'));
      expect(text, f).toContain(BODY);
      expect(summary, f).toMatch(/HttpOnly cookie values withheld: need this origin's "HttpOnly values" switch/);
      expect(summary, f).toMatch(/Authorization value withheld: needs this origin's "HttpOnly values" switch/);
      expect(summary, f).toMatch(/Proxy-Authorization value withheld: a proxy's credentials are never captured/);
    }
  });

  it("a cookie the jar does not show readable with that very value is withheld: no jar, an empty one (a partitioned cookie is not in it), another value", () => {
    const d = keeps({ captureSensitive: true, cookies: true });
    expect(record(d, "no jar").c.entries[0]?.cookies).toEqual([{ name: "pref" }, { name: "hsid" }]);
    expect(record(d, []).c.entries[0]?.cookies).toEqual([{ name: "pref" }, { name: "hsid" }]);
    // The page changed the readable cookie between the send and the look: its sent value is not shown readable.
    expect(record(d, [{ name: "pref", value: "other", httpOnly: false }]).c.entries[0]?.cookies).toEqual([{ name: "pref" }, { name: "hsid" }]);
    // A readable cookie of the same name does not make an HttpOnly one's other value readable.
    expect(record(d, [...JAR, { name: "hsid", value: "x", httpOnly: false }]).c.entries[0]?.cookies?.[1]).toEqual({ name: "hsid" });
  });

  it("Cookies off: neither values nor names are recorded, only how many", () => {
    const { c } = record(keeps({ captureSensitive: true, cookiesHttpOnly: true, observe: true }));
    const held = JSON.stringify(c);
    for (const v of [HTTPONLY, READABLE, "hsid", "pref", TOKEN]) expect(held).not.toContain(v);
    expect(c.entries[0]?.cookies).toEqual([{}, {}]);
    const har = exported(c, ALL)[0]!.text;
    expect(JSON.parse(har).log.entries[0].request.cookies).toEqual([]);
    expect(har).toContain(MARKER.cookies(2).replace(/"/g, '\\"'));
  });

  it("Console & network off: the body is not recorded, only its size, and the export says which switch", () => {
    const { c } = record(keeps({ captureSensitive: true, cookies: true }));
    expect(c.entries[0]?.body).toEqual({ size: BODY.length, kept: 0, omitted: "observe_off" });
    expect(JSON.stringify(c)).not.toContain(BODY);
    const { summary } = buildExport(c, at(ALL), "har", "0.1.0");
    expect(summary.warnings.map((w) => w.warning)).toContain('request body withheld: needs this origin\'s "Console & network" switch');
  });

  it("every switch on: all recorded and exported, except the proxy's credential and the response's Set-Cookie", () => {
    const { c } = record(ALL);
    for (const { f, text } of exported(c, ALL)) {
      for (const v of [HTTPONLY, READABLE, TOKEN, BODY]) expect(text, f).toContain(v);
      expect(text, f).not.toContain(PROXY);
      expect(text, f).not.toMatch(/set-cookie/i);
    }
    expect(JSON.stringify(c)).not.toContain(PROXY);
    expect(JSON.stringify(c)).not.toMatch(/set-cookie/i);
  });

  it("a Cookie header with a marker still parses: no marker holds a `;`", () => {
    for (const m of [MARKER.cookies(3), MARKER.httpOnly, MARKER.authorization, MARKER.proxyAuthorization]) expect(m).not.toContain(";");
    expect(parseCookieHeader(`a=1; b=${MARKER.httpOnly}; bare`)).toEqual([{ name: "a", value: "1" }, { name: "b", value: MARKER.httpOnly }, { name: "", value: "bare" }]);
  });

  it("the header cap counts the cookies and the token it keeps", () => {
    const big = [{ name: "Cookie", value: `pref=${"x".repeat(HEADERS_CAP)}` }, { name: "Accept", value: "*/*" }];
    const r = recordHeaders(big, ALL, [{ name: "pref", value: "x".repeat(HEADERS_CAP), httpOnly: false }], HEADERS_CAP, Infinity);
    expect(r).toMatchObject({ headers: [], cut: "too_large", bytes: 0 });
    expect(recordHeaders(HEADERS, ALL, JAR, HEADERS_CAP, 30)).toMatchObject({ headers: [["Content-Type", "text/plain"]], cut: "budget" });
  });

  it("headers arriving after the capture was forgotten, or the entry dropped, hold nothing", () => {
    const c = capture();
    const b: Budget = { used: 0 };
    onRequest(c, { requestId: "r", url: `${ORIGIN}/api`, method: "GET", type: "xmlhttprequest", timeStamp: 1 }, at(ALL), b);
    const e = headersFor(c, "r");
    expect(e).toBeDefined();
    release(c, b);
    putHeaders(c, e!, HEADERS, ALL, JAR, b);
    expect(e?.headers).toBeUndefined();
    expect(b.used).toBe(0);
    const c2 = { ...capture(), max: 1 };
    onRequest(c2, { requestId: "r1", url: `${ORIGIN}/1`, method: "GET", type: "xmlhttprequest", timeStamp: 1 }, at(ALL), b);
    const e1 = headersFor(c2, "r1");
    onRequest(c2, { requestId: "r2", url: `${ORIGIN}/2`, method: "GET", type: "xmlhttprequest", timeStamp: 2 }, at(ALL), b);
    putHeaders(c2, e1!, HEADERS, ALL, JAR, b);
    expect(e1?.headers).toBeUndefined();
    expect([b.used, c2.held]).toEqual([0, 0]);
  });

  it("a redirect's next hop is judged by its own URL: a 307 from an origin with every switch to one without gives nothing", () => {
    const c = capture();
    const b: Budget = { used: 0 };
    const other = "https://api.example";
    const judge: Judge = (url) => (url.startsWith(ORIGIN) ? ALL : url.startsWith(other) ? captureKeeps(judgeUrl(withRule(defaultPolicy(), { pattern: "api.example", captureSensitive: true }), url)) : keeps({}));
    const rb = { raw: [{ bytes: new TextEncoder().encode(BODY) }] };
    onRequest(c, { requestId: "r", url: `${ORIGIN}/go`, method: "POST", type: "xmlhttprequest", timeStamp: 1, requestBody: rb }, judge, b);
    onHeaders(c, "r", HEADERS, b, judge, JAR);
    onRedirect(c, "r", 307, "HTTP/1.1 307 Temporary Redirect", 2);
    onRequest(c, { requestId: "r", url: `${other}/api`, method: "POST", type: "xmlhttprequest", timeStamp: 3, requestBody: rb }, judge, b);
    onHeaders(c, "r", HEADERS, b, judge, JAR);
    const hop = JSON.stringify(c.entries[1]);
    for (const v of [HTTPONLY, READABLE, TOKEN, BODY, "hsid"]) expect(hop).not.toContain(v);
    expect(c.entries[1]?.body).toMatchObject({ kept: 0, omitted: "observe_off" });
    expect(c.entries[0]?.body?.text).toBe(BODY);
  });

  it("a switch turned off while the headers were on their way wins", () => {
    const c = capture();
    const b: Budget = { used: 0 };
    onRequest(c, { requestId: "r", url: `${ORIGIN}/api`, method: "GET", type: "xmlhttprequest", timeStamp: 1 }, at(ALL), b);
    putHeaders(c, headersFor(c, "r")!, HEADERS, keeps({ captureSensitive: true }), JAR, b);
    const held = JSON.stringify(c);
    for (const v of [HTTPONLY, READABLE, TOKEN]) expect(held).not.toContain(v);
  });
});

describe("export after the switches changed (SECURITY I-75)", () => {
  it("HttpOnly values and Console & network off since: the HttpOnly value, the token and the body are withheld again", () => {
    const { c } = record(ALL);
    const now = keeps({ captureSensitive: true, cookies: true });
    for (const { f, text } of exported(c, now)) {
      for (const v of [HTTPONLY, TOKEN, BODY, PROXY]) expect(text, f).not.toContain(v);
      expect(text, f).toContain(`pref=${READABLE}`);
    }
    const shaped = withCurrentPolicy(c, at(now)).entries[0];
    expect(shaped?.withheld?.sort()).toEqual(["authorization", "body", "httpOnly", "proxy_authorization"]);
    // The capture itself still holds them: the person may turn the switches on again.
    expect(JSON.stringify(c)).toContain(HTTPONLY);
    expect(exported(c, ALL)[0]?.text).toContain(HTTPONLY);
  });

  it("Cookies off since: no cookie name or value; the capture switch off: metadata only; off the list: nothing named", () => {
    const { c } = record(ALL);
    const noCookies = exported(c, keeps({ captureSensitive: true, cookiesHttpOnly: true, observe: true }));
    for (const { f, text } of noCookies) for (const v of [HTTPONLY, READABLE, "hsid", "pref"]) expect(text, f).not.toContain(v);
    const meta = buildExport(c, at(keeps({ cookies: true, cookiesHttpOnly: true, observe: true })), "har", "0.1.0");
    const text = new TextDecoder().decode(meta.file.bytes);
    for (const v of [HTTPONLY, READABLE, TOKEN, BODY]) expect(text).not.toContain(v);
    expect(() => buildExport(c, at(keeps({ cookies: true })), "http", "0.1.0")).toThrow(/no request with captured headers/);
    const gone = buildExport(c, () => keeps({}), "har", "0.1.0");
    expect(new TextDecoder().decode(gone.file.bytes)).not.toContain(READABLE);
  });

  it("a value withheld when recorded stays withheld when the switch is turned on since", () => {
    const { c } = record(keeps({ captureSensitive: true, cookies: true }));
    for (const { f, text } of exported(c, ALL)) {
      for (const v of [HTTPONLY, TOKEN, BODY]) expect(text, f).not.toContain(v);
      expect(text, f).toContain("withheld by Torii: HttpOnly value");
      expect(text, f).toContain("withheld by Torii: Authorization value");
    }
  });
});

// SECURITY I-79 in capture exports: a HAR or HTTP replay file built from a capture carries no URL
// of an origin off the list, in any field; the replay's Content-Length counts what it carries.
import { describe, expect, it } from "vitest";
import { buildExport } from "../../src/tools/capture/export.js";
import { captureWithoutForeignUrls } from "../../src/tools/capture/foreign.js";
import type { Capture, Entry } from "../../src/tools/capture/model.js";
import type { Judge } from "../../src/tools/capture/record.js";
import { WITHHELD } from "../../src/outbound/foreign.js";
import { defaultPolicy, type Policy } from "../../src/policy/policy.js";

const A = "https://shop.example";
const B = "https://b.evil:8443/SECRET?s=SECRET";
const P: Policy = { ...defaultPolicy(), rules: [{ pattern: "shop.example" }] };
/** shop.example with every capture switch on: the export gives everything it kept. */
const judge: Judge = (url) => {
  const ok = url.startsWith(`${A}/`);
  return { allowed: ok, sensitive: ok, bodies: ok, cookies: ok ? "all" : "none", credentials: ok };
};

function entry(n: number, o: Partial<Entry>): Entry {
  return { n, requestId: `r${n}`, method: "POST", url: `${A}/api/x`, type: "xmlhttprequest", startedAt: 1000 + n, endedAt: 1010 + n, status: 200, ...o };
}

function capture(): Capture {
  const text = `{"next":"${B}","escaped":"${B.replace(/\//g, "\\/")}"}`;
  const bin = `\u0000\u0001${B} \u00ff`;
  return {
    id: "c1", session: "s1", tabId: 5, frameId: 0, documentId: "D1", origin: A, url: `${A}/page?from=${encodeURIComponent(B)}`, sensitive: true, max: 200,
    startedAt: Date.UTC(2026, 0, 2), entries: [
      entry(1, {
        url: `${A}/api/x?next=${B}`,
        headers: [["Referer", `${A}/page?from=${encodeURIComponent(B)}`], ["X-Return", B], ["Content-Type", "application/json"], ["Cookie", ""], ["Authorization", ""]],
        cookies: [{ name: "back", value: encodeURIComponent(B) }, { name: "sid", value: "s1" }],
        authorization: [`Bearer ${B}`],
        body: { text, size: text.length, kept: text.length } }),
      entry(2, { headers: [["Content-Type", "application/x-www-form-urlencoded"]], body: { form: [["next", B], [B, "key"]], size: 10, kept: 10 } }),
      entry(3, { headers: [["Content-Type", "application/octet-stream"]], body: { b64: btoa(bin), binary: true, size: bin.length, kept: bin.length } }),
      entry(4, { method: "GET", error: `net::ERR_FAILED at ${B}`, statusText: `moved to ${B}` }),
    ],
    dropped: 0, ignored: 0, seq: 4, held: 0,
  };
}

describe("captureWithoutForeignUrls", () => {
  for (const format of ["har", "http"] as const) {
    it(`the ${format} file names nothing of B; A's URLs stay`, () => {
      const { file } = buildExport(captureWithoutForeignUrls(capture(), P), judge, format, "0.1.0");
      const all = new TextDecoder("latin1").decode(file.bytes);
      expect(all).not.toMatch(/SECRET|b\.evil/);
      expect(all).toContain("/api/x");
      expect(all).toMatch(/back=\[url(%20| )withheld\]/);
      expect(all).toContain(`Bearer ${WITHHELD}`);
      expect(all).toContain(WITHHELD.replace(" ", format === "http" ? "%20" : " "));
    });
  }

  it("a replay packet frames the bytes it carries", () => {
    const { file } = buildExport(captureWithoutForeignUrls(capture(), P), judge, "http", "0.1.0");
    const raw = new TextDecoder("latin1").decode(file.bytes);
    const first = raw.split("POST ")[1] as string;
    const len = Number(/Content-Length: (\d+)/.exec(first)?.[1]);
    const body = first.split("\r\n\r\n")[1] as string;
    expect(body.slice(0, len)).toBe(`{"next":"${WITHHELD}","escaped":"${WITHHELD}"}`);
  });

  it("a binary body keeps its other bytes; an unreadable base64 body is left as it was", () => {
    const c = captureWithoutForeignUrls(capture(), P);
    expect(atob(c.entries[2]?.body?.b64 as string)).toBe(`\u0000\u0001${WITHHELD} \u00ff`);
    const odd = capture();
    (odd.entries[2] as Entry).body = { b64: "%%%not base64", binary: true, size: 3, kept: 3 };
    expect(captureWithoutForeignUrls(odd, P).entries[2]?.body?.b64).toBe("%%%not base64");
  });

  it("nothing foreign: every field as it was", () => {
    const c = capture();
    c.entries = [entry(1, { headers: [["Referer", `${A}/page`]], body: { text: `see ${A}/x`, size: 1, kept: 1 } })];
    c.url = `${A}/page`;
    expect(captureWithoutForeignUrls(c, P)).toEqual(c);
  });
});

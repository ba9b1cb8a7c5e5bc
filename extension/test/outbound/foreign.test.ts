// SECURITY I-79: every URL of an origin the policy does not allow is withheld from text, in every
// spelling a browser, a page or a server produces; allowed URLs stay byte for byte.
import { describe, expect, it } from "vitest";
import { WITHHELD, policyJudge, withholdDeep, withholdForeignUrls, withholdInResult } from "../../src/outbound/foreign.js";
import { defaultPolicy, permissivePolicy, type OriginRule, type Policy } from "../../src/policy/policy.js";

const W = WITHHELD;

function policy(...patterns: string[]): Policy {
  return { ...defaultPolicy(), rules: patterns.map((pattern): OriginRule => ({ pattern })) };
}

/** A allowed (both schemes, default port), a.test:8443 too; everything else foreign. */
const P = policy("a.test", "a.test:8443", "[::1]:8080", "bücher.example");
const judge = policyJudge(P);
const w = (s: string, j = judge) => withholdForeignUrls(s, j);

describe("withholdForeignUrls: what is kept", () => {
  it("text without URLs comes back as the same string", () => {
    for (const s of ["", "a", "hello world", "row: Alice | 0 | Paris | [a1]", "a/b/c", "// a comment", "1/2 // 3", "ratio 3:1//x", "Give an absolute URL: a scheme (https://), a host and a path."]) expect(w(s)).toBe(s);
  });

  it("allowed URLs stay byte for byte, whatever surrounds them", () => {
    for (const s of [
      "https://a.test/",
      "see http://a.test/x?y=1#z.",
      "'https://a.test:8443/p' from origin 'https://a.test'",
      "(https://a.test/wiki/Foo_(bar))",
      "HTTPS://A.TEST/UP",
      "ws://a.test/socket and wss://a.test/s",
      "http://[::1]:8080/v6",
      "https://bücher.example/straße",
      "https://xn--bcher-kva.example/",
      "//a.test/protocol-relative",
      "blob:https://a.test/8c4e-11",
      "view-source:https://a.test/",
      "torii://files/20260101-x-1/report.pdf",
      "file:///home/me/notes.txt",
      "https://a.test/login?next=%2Fhome",
      "a bare https:// in prose, or http:/// alone",
    ]) expect(w(s), s).toBe(s);
  });
});

describe("withholdForeignUrls: what is withheld", () => {
  const cases: [string, string, string][] = [
    ["plain", "go to https://b.test/x?s=SECRET now", `go to ${W} now`],
    ["Chrome's CORS message after a redirect", "Access to fetch at 'https://c.test/chosen?s=SECRET' (redirected from 'https://b.test:8080/x?y') from origin 'https://a.test' has been blocked by CORS policy.", `Access to fetch at '${W}' (redirected from '${W}') from origin 'https://a.test' has been blocked by CORS policy.`],
    ["CSP", `Refused to connect to 'https://b.test/SECRET' because it violates the following Content Security Policy directive: "connect-src 'self'".`, `Refused to connect to '${W}' because it violates the following Content Security Policy directive: "connect-src 'self'".`],
    ["mixed content", "Mixed Content: The page at 'https://a.test/' was loaded over HTTPS, but requested an insecure resource 'http://b.test/SECRET'. This request has been blocked.", `Mixed Content: The page at 'https://a.test/' was loaded over HTTPS, but requested an insecure resource '${W}'. This request has been blocked.`],
    ["WebSocket", "WebSocket connection to 'ws://b.test/SECRET' failed: ", `WebSocket connection to '${W}' failed: `],
    ["another port of an allowed host", "http://a.test:8080/SECRET", W],
    ["another scheme's default port", "https://a.test:80/SECRET", W],
    ["userinfo naming A, host B", "https://a.test@b.test/SECRET", W],
    ["userinfo with a port-looking password", "https://a.test:443@b.test/SECRET", W],
    ["an encoded @ in the host", "https://a.test%40b.test/SECRET", W],
    ["IPv6 of another port", "http://[::1]:9090/SECRET", W],
    ["IPv6 cut mid-way", "http://[::1:8080/SECRET", W],
    ["IDN of another name", "https://bücher.evil/SECRET", W],
    ["upper case scheme and host", "HTTP://B.TEST/SECRET", W],
    ["mixed case scheme", "hTTpS://b.test/SECRET", W],
    ["extra slashes a browser skips", "https:////b.test/SECRET", W],
    ["a URL cut mid-host", "Access to fetch at 'https://b.te", `Access to fetch at '${W}`],
    ["a clipped console text", `x https://b.test/${"q".repeat(40)}… (2100 chars)`, `x ${W} (2100 chars)`],
    ["protocol-relative in an attribute", `src="//b.test/SECRET"`, `src="${W}"`],
    ["protocol-relative in CSS", "url(//b.test/SECRET)", `url(${W})`],
    ["percent-encoded in an allowed URL's query", "https://a.test/login?next=https%3A%2F%2Fb.test%2FSECRET&x=1", `https://a.test/login?next=${W}`],
    ["percent-encoded, lower case", "next=http%3a%2f%2fb.test%2fSECRET", `next=${W}`],
    ["percent-encoded twice", "next=https%253A%252F%252Fb.test%252FSECRET", `next=${W}`],
    ["a plain URL in an allowed URL's query", "https://a.test/r?to=https://b.test/SECRET", `https://a.test/r?to=${W}`],
    ["protocol-relative in an allowed URL's query", "https://a.test/r?to=//b.test/SECRET", `https://a.test/r?to=${W}`],
    ["JSON-escaped", String.raw`{"next":"https:\/\/b.test\/SECRET"}`, `{"next":"${W}"}`],
    ["JSON-escaped protocol-relative", String.raw`{"next":"\/\/b.test\/SECRET"}`, `{"next":"${W}"}`],
    ["\\u escapes", String.raw`"https\u003a\u002f\u002fb.test\u002fSECRET"`, `"${W}"`],
    ["\\x escapes", String.raw`'https\x3a\x2f\x2fb.test\x2fSECRET'`, `'${W}'`],
    ["HTML references", "https&#58;&#47;&#47;b.test&#47;SECRET", W],
    ["HTML hex references", "https&#x3a;&#x2F;&#x2f;b.test/SECRET", W],
    ["HTML named references", "https&colon;&sol;&sol;b.test/SECRET", W],
    ["two quoted URLs back to back", "'https://a.test/x','https://b.test/SECRET'", `'https://a.test/x','${W}'`],
    ["ftp with a host", "ftp://a.test/SECRET", W],
    ["file with a host", "file://fileserver/SECRET", W],
    ["an extension's URL", "chrome-extension://abcdefghijklmnop/SECRET.html", W],
    ["chrome: pages", "chrome://settings/SECRET", W],
    ["an unknown scheme", "git+ssh://git@b.test/SECRET.git", W],
    ["a scheme glued to a word", "xhttps://a.test/SECRET", W],
    ["a blob of another origin", "blob:https://b.test/SECRET", `blob:${W}`],
    ["view-source of another origin", "view-source:https://b.test/SECRET", `view-source:${W}`],
    ["torii: anything but this session's files", "torii://b.test/SECRET", W],
    ["javascript: with slashes", "javascript://b.test/%0aSECRET", W],
  ];
  for (const [what, input, want] of cases) {
    it(what, () => {
      const got = w(input);
      expect(got).toBe(want);
      expect(got).not.toContain("SECRET");
    });
  }

  it("a candidate whose judged part is longer than the cap is withheld", () => {
    expect(w(`https://a.test/${"p".repeat(3000)}`)).toBe(W);
  });

  it("an escape before the scheme keeps its backslash: JSON text stays valid", () => {
    const json = JSON.stringify({ a: "line\nhttps://b.test/SECRET", b: 'q"https://b.test/x"', c: "\\https://b.test/y", d: "https://a.test/ok" });
    const out = w(json);
    expect(out).not.toMatch(/SECRET|b\.test/);
    const back = JSON.parse(out) as Record<string, string>;
    expect(back.d).toBe("https://a.test/ok");
    expect(back.a).toBe(`line\n${W}`);
  });
});

describe("withholdForeignUrls: policies", () => {
  it("an empty allowlist withholds every URL with a host", () => {
    const j = policyJudge(defaultPolicy());
    expect(w("https://a.test/ and //a.test/x and ws://a.test/", j)).toBe(`${W} and ${W} and ${W}`);
    expect(w("file:///etc/hosts, https:// alone", j)).toBe("file:///etc/hosts, https:// alone");
  });

  it("permissive mode keeps every http(s) and ws(s) URL, never another scheme with a host", () => {
    const j = policyJudge(permissivePolicy());
    const ok = "https://b.test/x http://[::1]:9/y ws://c.test/z //d.test/w";
    expect(w(ok, j)).toBe(ok);
    expect(w("ftp://b.test/x chrome-extension://id/p file://host/s", j)).toBe(`${W} ${W} ${W}`);
    expect(w("http://[::1", j)).toBe(W);
  });

  it("a path rule keeps its own paths only", () => {
    const j = policyJudge(policy("https://a.test/app/*"));
    expect(w("https://a.test/app/x?q=1", j)).toBe("https://a.test/app/x?q=1");
    expect(w("'https://a.test/app/x'.", j)).toBe("'https://a.test/app/x'.");
    expect(w("https://a.test/admin/SECRET", j)).toBe(W);
    expect(w("http://a.test/app/x", j)).toBe(W);
  });

  it("a wildcard rule covers subdomains, not look-alikes", () => {
    const j = policyJudge(policy("*.a.test"));
    expect(w("https://x.y.a.test/p https://a.test/", j)).toBe("https://x.y.a.test/p https://a.test/");
    expect(w("https://evila.test/SECRET https://a.test.evil/SECRET", j)).toBe(`${W} ${W}`);
  });
});

describe("withholdForeignUrls: volume", () => {
  it("hundreds of URLs, allowed and foreign interleaved", () => {
    const parts: string[] = [];
    const want: string[] = [];
    for (let i = 0; i < 500; i++) {
      parts.push(`https://a.test/${i}`, `'https://b${i}.test/SECRET${i}'`);
      want.push(`https://a.test/${i}`, `'${W}'`);
    }
    expect(w(parts.join(" "))).toBe(want.join(" "));
  });

  it("one run of thousands of glued URLs is read once, not once per URL", () => {
    const allowed = "https://a.test/?".repeat(5_000);
    expect(w(allowed)).toBe(allowed);
    const foreign = `${"https://a.test/?".repeat(2_500)}https://b.test/SECRET${"https://a.test/?".repeat(2_500)}`;
    const out = w(foreign);
    expect(out).not.toContain("SECRET");
    expect(out.startsWith("https://a.test/?".repeat(2_500))).toBe(true);
  });

  it("separators with no URL, thousands of them", () => {
    const s = ":// // %2F%2F \\/\\/ ".repeat(5_000);
    expect(w(s)).toBe(s);
  });
});

describe("withholdDeep and withholdInResult", () => {
  it("walks values and keys, shares what did not change", () => {
    const keep = { n: 1, ok: "https://a.test/" };
    const v = { keep, list: ["x", "https://b.test/SECRET"], nested: { "https://b.test/k": true }, nil: null };
    const out = withholdDeep(v, judge);
    expect(out.keep).toBe(keep);
    expect(out.list).toEqual(["x", W]);
    expect(out.nested).toEqual({ [W]: true });
    expect(out.nil).toBeNull();
    expect(JSON.stringify(out)).not.toContain("SECRET");
  });

  it("a value nested past the depth cap is judged as its JSON text", () => {
    let v: unknown = "https://b.test/SECRET";
    for (let i = 0; i < 200; i++) v = [v];
    expect(JSON.stringify(withholdDeep(v, judge))).not.toContain("SECRET");
  });

  it("a result: text blocks, structured content and errors; images and resource links untouched; nothing to do → the same object", () => {
    const r = {
      content: [
        { type: "text" as const, text: "moved to https://b.test/SECRET" },
        { type: "image" as const, data: "https://b.test/not-text", mimeType: "image/png" },
        { type: "resource_link" as const, uri: "torii://files/f/x.har", name: "x.har", mimeType: "application/json", size: 1 },
      ],
      structuredContent: { error: { code: "internal", message: "at 'https://b.test/SECRET'", hint: "see //b.test/h" } },
      isError: true,
    };
    const out = withholdInResult(r, P);
    expect(out.content[0]).toEqual({ type: "text", text: `moved to ${W}` });
    expect(out.content[1]).toBe(r.content[1]);
    expect(out.content[2]).toBe(r.content[2]);
    expect(out.structuredContent).toEqual({ error: { code: "internal", message: `at '${W}'`, hint: `see ${W}` } });
    expect(out.isError).toBe(true);
    const clean = { content: [{ type: "text" as const, text: "https://a.test/" }], structuredContent: { url: "https://a.test/" } };
    expect(withholdInResult(clean, P)).toBe(clean);
  });
});

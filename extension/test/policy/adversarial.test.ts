// The adversarial URL table: every URL that tries to slip past the allowlist, in one
// table-driven suite. Zero bypasses: a row that should be refused and is allowed fails the suite.
import { describe, expect, it } from "vitest";
import { parsePattern, PatternError, urlParts } from "../../src/policy/pattern.js";
import { defaultPolicy, judgeUrl, type Policy } from "../../src/policy/policy.js";

function policy(...patterns: string[]): Policy {
  return { ...defaultPolicy(), rules: patterns.map((pattern) => ({ pattern })) };
}

// [pattern(s), url, allowed]
const TABLE: [string[], string, boolean][] = [
  // the plain cases
  [["allowed.com"], "https://allowed.com/", true],
  [["allowed.com"], "http://allowed.com/x?y#z", true],
  [["allowed.com"], "https://www.allowed.com/", false],
  [["*.allowed.com"], "https://www.allowed.com/", true],
  [["*.allowed.com"], "https://a.b.allowed.com/", true],
  [["*.allowed.com"], "https://allowed.com/", true],
  // userinfo
  [["allowed.com"], "https://allowed.com@evil.com/", false],
  [["allowed.com"], "https://allowed.com:443@evil.com/", false],
  [["allowed.com"], "https://user:pw@allowed.com/", true],
  [["*.allowed.com"], "https://x.allowed.com@evil.com/", false],
  // look-alike suffixes and prefixes
  [["allowed.com"], "https://allowed.com.evil.com/", false],
  [["*.allowed.com"], "https://allowed.com.evil.com/", false],
  [["allowed.com"], "https://evilallowed.com/", false],
  [["*.allowed.com"], "https://evilallowed.com/", false],
  [["allowed.com"], "https://allowed.co/", false],
  [["allowed.com"], "https://allowed.com%2eevil.com/", false],
  [["allowed.com"], "https://evil.com/allowed.com", false],
  [["allowed.com"], "https://evil.com/?u=https://allowed.com", false],
  [["allowed.com"], "https://evil.com#allowed.com", false],
  [["allowed.com"], "https://evil.com\\@allowed.com/", false],
  // IDN and punycode
  [["bücher.de"], "https://xn--bcher-kva.de/", true],
  [["xn--bcher-kva.de"], "https://bücher.de/", true],
  [["bücher.de"], "https://BÜCHER.de/", true],
  [["apple.com"], "https://аpple.com/", false], // Cyrillic а
  [["apple.com"], "https://xn--pple-43d.com/", false],
  [["*.apple.com"], "https://www.аpple.com/", false],
  [["allowed.com"], "https://allowed.com\u3002evil.com/", false], // ideographic full stop
  // mixed case and trailing dots
  [["allowed.com"], "https://ALLOWED.CoM/", true],
  [["ALLOWED.com"], "https://allowed.com/", true],
  [["allowed.com"], "https://allowed.com./", true],
  [["allowed.com."], "https://allowed.com/", true],
  [["allowed.com"], "https://allowed.com../", false],
  [["allowed.com"], "https://allowed.com.evil.com./", false],
  // ports
  [["allowed.com"], "https://allowed.com:8443/", false],
  [["allowed.com"], "http://allowed.com:8080/", false],
  [["allowed.com"], "https://allowed.com:443/", true],
  [["allowed.com"], "http://allowed.com:80/", true],
  [["allowed.com:8080"], "http://allowed.com:8080/", true],
  [["allowed.com:8080"], "http://allowed.com/", false],
  [["allowed.com:8080"], "http://allowed.com:8081/", false],
  [["allowed.com:*"], "http://allowed.com:9999/", true],
  [["https://allowed.com"], "http://allowed.com/", false],
  [["http://allowed.com"], "https://allowed.com/", false],
  // IP literals and loopback
  [["127.0.0.1:5000"], "http://127.0.0.1:5000/", true],
  [["127.0.0.1:5000"], "http://127.1:5000/", true],
  [["127.0.0.1:5000"], "http://2130706433:5000/", true],
  [["127.0.0.1:5000"], "http://127.0.0.2:5000/", false],
  [["127.0.0.1:5000"], "http://localhost:5000/", false],
  [["[::1]:5000"], "http://[::1]:5000/", true],
  [["[::1]:5000"], "http://[0:0:0:0:0:0:0:1]:5000/", true],
  // paths
  [["https://allowed.com/app/*"], "https://allowed.com/app/x", true],
  [["https://allowed.com/app/*"], "https://allowed.com/other", false],
  [["https://allowed.com/app/*"], "https://allowed.com/app/../other", false],
  [["https://allowed.com/app/*"], "https://allowed.com/app/%2e%2e/other", false],
  [["https://allowed.com/app/*"], "https://allowed.com/appx", false],
  // schemes without an http(s) origin
  [["allowed.com"], "data:text/html,<h1>allowed.com</h1>", false],
  [["allowed.com"], "javascript:alert(1)//allowed.com", false],
  [["allowed.com"], "blob:https://allowed.com/0b5e1d2c-0000-4000-8000-000000000000", true],
  [["allowed.com"], "blob:https://evil.com/0b5e1d2c-0000-4000-8000-000000000000", false],
  [["allowed.com"], "blob:null/0b5e1d2c", false],
  [["allowed.com"], "file:///etc/passwd", false],
  [["allowed.com"], "file://allowed.com/etc/passwd", false],
  [["allowed.com"], "about:blank", false],
  [["allowed.com"], "about:srcdoc", false],
  [["allowed.com"], "view-source:https://allowed.com/", false],
  [["allowed.com"], "chrome://settings", false],
  [["allowed.com"], "chrome-extension://abc/allowed.com", false],
  [["allowed.com"], "ws://allowed.com/", false],
  [["allowed.com"], "ftp://allowed.com/", false],
  [["allowed.com"], "filesystem:https://allowed.com/temporary/x", false],
  [["allowed.com"], "", false],
  [["allowed.com"], "allowed.com", false],
  [["allowed.com"], "//allowed.com/", false],
  // the empty list refuses everything
  [[], "https://allowed.com/", false],
  [[], "http://127.0.0.1/", false],
];

describe("allowlist: adversarial URLs", () => {
  it.each(TABLE)("%j × %s → %s", (patterns, url, allowed) => {
    expect(judgeUrl(policy(...patterns), url).allowed).toBe(allowed);
  });

  it("zero bypasses across the whole table", () => {
    const bypasses = TABLE.filter(([p, u, ok]) => !ok && judgeUrl(policy(...p), u).allowed);
    expect(bypasses).toEqual([]);
  });
});

describe("allowlist: patterns the validator refuses", () => {
  const BAD = [
    "*", "**", "*://*", "https://*", "https://*/*", "*.com", "*.", "*.*", "a.*.com", "allowed*.com", "*allowed.com",
    "user@allowed.com", "https://user:pw@allowed.com", "allowed.com?x=1", "allowed.com#x", "file:///etc",
    "javascript:alert(1)", "data:text/html,x", "ftp://allowed.com", "chrome://settings", "allowed.com:0",
    "allowed.com:65536", "*.127.0.0.1", "allowed..com", "", "   ", "a b.com", "view-source:https://allowed.com",
  ];
  it.each(BAD)("refuses %j", (p) => {
    expect(() => parsePattern(p)).toThrow(PatternError);
  });

  it("a stored rule with a bad pattern allows nothing", () => {
    expect(judgeUrl({ ...defaultPolicy(), rules: [{ pattern: "*" }] }, "https://a.com/").allowed).toBe(false);
  });
});

describe("permissive mode", () => {
  it("allows web pages but never script or browser URLs", () => {
    const p = { ...defaultPolicy(), permissive: true };
    expect(judgeUrl(p, "https://any.example/").allowed).toBe(true);
    expect(judgeUrl(p, "javascript:alert(1)").allowed).toBe(false);
    expect(judgeUrl(p, "view-source:https://a.com/").allowed).toBe(false);
    expect(judgeUrl(p, "chrome://settings").allowed).toBe(false);
    expect(judgeUrl(p, "about:settings").allowed).toBe(false);
  });
});

describe("urlParts", () => {
  it("normalises host, port and blob origins", () => {
    expect(urlParts("https://ALLOWED.com.:443/a")).toEqual({ scheme: "https", host: "allowed.com", port: 443, path: "/a" });
    expect(urlParts("blob:http://x.com:8080/u")).toMatchObject({ host: "x.com", port: 8080 });
    expect(urlParts("data:,x")).toBeNull();
  });
});

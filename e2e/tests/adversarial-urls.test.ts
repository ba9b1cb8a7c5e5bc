// Adversarial: URL tricks and redirect chains. navigate to an attacker spelt every way a URL parser
// can be confused (userinfo, IPv4 shorthand, trailing dots, case, ports, ideographic dots, backslashes,
// fragments, pseudo-schemes) must be refused before anything reaches it (the attacker's log stays
// empty); a redirect chain or refresh ending on the attacker returns nothing of it.
import { expect, it } from "vitest";
import { useAttackRig } from "../src/attack/rig.ts";
import { type Attacker, ATTACKERS } from "../src/attack/secrets.ts";
import { describeBrowser } from "../src/harness.ts";
import { pollUntil, withTimeout } from "../src/util.ts";

type Spell = (host: string, port: number, a: string) => string;

const B_SPELLINGS: [string, Spell][] = [
  ["userinfo naming A", (h, _p, a) => `http://${a}@${h}/catch`],
  ["user:pass userinfo", (h) => `http://user:pass@${h}/catch`],
  ["IPv4 shorthand 127.1", (_h, p) => `http://127.1:${p}/catch`],
  ["decimal IPv4", (_h, p) => `http://2130706433:${p}/catch`],
  ["hex IPv4", (_h, p) => `http://0x7f000001:${p}/catch`],
  ["octal IPv4", (_h, p) => `http://0177.0.0.1:${p}/catch`],
  ["trailing dot", (_h, p) => `http://127.0.0.1.:${p}/catch`],
  ["upper-case scheme", (h) => `HTTP://${h}/catch`],
  ["leading-zero port", (_h, p) => `http://127.0.0.1:0${p}/catch`],
  ["ideographic full stops", (_h, p) => `http://127\u30020\u30020\u30021:${p}/catch`],
  ["fullwidth digits", (_h, p) => `http://\uff11\uff12\uff17.0.0.1:${p}/catch`],
  ["backslash before a fake userinfo", (h, _p, a) => `http://${h}\\@${a}/`],
  ["fragment before a fake userinfo", (h, _p, a) => `http://${h}#@${a}/`],
  ["query before a fake userinfo", (h, _p, a) => `http://${h}?@${a}/`],
  ["slash-backslash", (h) => `http:/\\${h}/catch`],
  ["tab inside the host", (_h, p) => `http://127.0.0.1:\t${p}/catch`],
  ["leading and trailing spaces", (h) => `  http://${h}/catch  `],
  ["protocol-relative", (h) => `//${h}/catch`],
  ["scheme-less", (h) => `${h}/catch`],
  ["localhost", (_h, p) => `http://localhost:${p}/catch`],
  ["IPv4-mapped IPv6", (_h, p) => `http://[::ffff:127.0.0.1]:${p}/catch`],
  ["0.0.0.0", (_h, p) => `http://0.0.0.0:${p}/catch`],
  ["view-source:", (h) => `view-source:http://${h}/catch`],
  ["blob:", (h) => `blob:http://${h}/0b0e3a52-0000-4000-8000-000000000000`],
  ["filesystem:", (h) => `filesystem:http://${h}/temporary/x`],
];

const C_SPELLINGS: [string, Spell][] = [
  ["IPv4 shorthand 127.2", (_h, p) => `http://127.2:${p}/catch`],
  ["userinfo naming A", (h, _p, a) => `http://${a}@${h}/catch`],
  ["decimal IPv4", (_h, p) => `http://2130706434:${p}/catch`],
  ["trailing dot", (_h, p) => `http://127.0.0.2.:${p}/catch`],
  ["backslash before a fake userinfo", (h, _p, a) => `http://${h}\\@${a}/`],
];

describeBrowser("adversarial: URL tricks and redirect chains", () => {
  const R = useAttackRig("adv-urls");

  async function tricked(x: Attacker, url: string, tabId?: number) {
    const res = await R().call("navigate", { url, ...(tabId !== undefined ? { tabId } : { newTab: true }), timeoutMs: 3_000, observe: "text" }, 15_000);
    const reached = R().site.requests(x).map((e) => `${e.method} ${e.path}`);
    if (reached.length) throw new Error(`LEAK: the navigation reached ${x}: ${reached.join(", ")}`);
    await R().expectClean({ agentNamed: true, kinds: [] });
    expect(["origin_not_allowed", "invalid_argument", "unsupported_page"], res.text).toContain(res.error?.code);
  }

  for (const [x, list] of [["b", B_SPELLINGS], ["c", C_SPELLINGS]] as [Attacker, [string, Spell][]][]) {
    for (const [name, spell] of list) {
      it(`navigate to ${x} spelt with ${name}: refused, nothing reaches ${x}`, async () => {
        await tricked(x, spell(R().site.host(x), R().site.port(x), R().site.host("a")));
      });
    }
  }

  it("navigate an agent tab to a javascript: URL that leaves for b: refused, nothing reaches b", async () => {
    const { tabId } = await R().open("/nest-leaf");
    R().site.clear();
    await tricked("b", `javascript:location.href='${R().site.url("b", "/catch")}'`, tabId);
  });

  it("navigate an agent tab to a data: URL: refused (an opaque document)", async () => {
    const { tabId } = await R().open("/nest-leaf");
    const res = await R().call("navigate", { tabId, url: "data:text/html,<h1>DATA-DOC-7c1</h1>", observe: "text" }, 15_000);
    await R().expectClean({ extra: ["DATA-DOC-7c1"], kinds: [] });
    expect(["origin_not_allowed", "invalid_argument", "unsupported_page"], res.text).toContain(res.error?.code);
  });

  for (const x of ATTACKERS) {
    for (const [name, path, q] of [
      ["301", "/hop", { code: 301, to: x, path: "/catch" }],
      ["302", "/hop", { code: 302, to: x, path: "/catch" }],
      ["303", "/hop", { code: 303, to: x, path: "/catch" }],
      ["307", "/hop", { code: 307, to: x, path: "/catch" }],
      ["308", "/hop", { code: 308, to: x, path: "/catch" }],
      ["three hops on A first", "/hop", { code: 302, to: x, path: "/catch", n: 3 }],
      ["a meta refresh", "/meta", { x }],
      ["a script's location change at load", "/nav-later", { x, ms: 0 }],
      [`a hop through ${x === "b" ? "c" : "b"}`, "/hop", { code: 302, to: x === "b" ? "c" : "b", path: `/redir-to?x=${x}&path=/catch` }],
    ] as const) {
      it(`navigate to A that ends on ${x} by ${name}: origin_not_allowed, nothing of ${x} returned`, async () => {
        const res = await R().call("navigate", { url: R().site.url("a", path, q), newTab: true, observe: "snapshot" }, 15_000);
        const land = await pollUntil(`the tab to land on ${x}`, () => R().browser.context.pages().find((p) => p.url().startsWith(R().site.origin[x])), { timeoutMs: 8_000, intervalMs: 30 });
        // As below: read once x's document has loaded, not while the old one is going away.
        await withTimeout(land.waitForLoadState("load"), 8_000);
        const after = await R().call("read_text", {}, 10_000);
        await R().expectClean({ kinds: [] });
        expect(land).toBeTruthy();
        expect(res.error?.code === "origin_not_allowed" || after.error?.code === "origin_not_allowed", `${res.text}\n${after.text}`).toBe(true);
        expect(after.error?.code, after.text).toBe("origin_not_allowed");
      });
    }

    it(`navigate to A that bounces through ${x} and back to A: lands on A, nothing of ${x} in the result`, async () => {
      const res = await R().call("navigate", { url: R().site.url("a", "/hop", { code: 302, to: x, path: `/hop?to=a&path=/nest-leaf` }), newTab: true, observe: "text" }, 15_000);
      await R().expectClean({ kinds: [] });
      expect(res.isError, res.text).toBe(false);
    });

    it(`a meta refresh to ${x} after a second: the next read is refused`, async () => {
      const { tabId, page } = await R().open("/meta", { x, delay: 1 });
      await pollUntil(`the refresh to ${x}`, () => page.url().startsWith(R().site.origin[x]), { timeoutMs: 8_000, intervalMs: 30 });
      // The read comes once x's document has loaded: the renderer's new URL can reach this test
      // before the browser has committed the navigation, and a read in that moment meets the old
      // document going away (navigation_failed) instead of x's.
      await withTimeout(page.waitForLoadState("load"), 8_000);
      const res = await R().call("snapshot", { tabId }, 10_000);
      await R().expectClean({ kinds: [] });
      expect(res.error?.code, res.text).toBe("origin_not_allowed");
    });
  }
});

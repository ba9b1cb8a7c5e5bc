// Adversarial: an attacker's URL in text. Chrome's own console messages (a CORS failure after a
// redirect only B chose, a CSP violation, a failed WebSocket), console text, page text in every
// spelling (plain, quoted, upper case, protocol-relative, percent-encoded, JSON-escaped, behind a
// userinfo naming A), an error a page function throws, A's own requests and bodies, a tab's URL and
// the HAR and replay files a capture exports: none may carry B's or C's host or URL (with its query
// marker) to the agent. A's own URLs stay intact. Decided from every result and file the agent got.
import { expect, it } from "vitest";
import { useAttackRig } from "../src/attack/rig.ts";
import { ATTACKERS, QS, SECRET_STRINGS } from "../src/attack/secrets.ts";
import { describeBrowser } from "../src/harness.ts";
import { setPolicy } from "../src/safety.ts";
import { pollUntil } from "../src/util.ts";

const WITHHELD = "[url withheld]";

describeBrowser("adversarial: no attacker's URL in any text", () => {
  const R = useAttackRig("adv-foreign-urls", { config: { broker: { toolGroups: ["devtools", "invoke"] } } });

  /** A only, with every switch these attacks need: code, invoke, console & network, sensitive capture. */
  const allowA = () => {
    const rule = { pattern: R().site.aPattern, act: true, evalExpression: true, evalProgram: true, invoke: true, observe: true, captureSensitive: true };
    return setPolicy(R().ext, { rules: [rule], actMode: true });
  };

  /** What of B and C a text carries (files the agent reads are not tool results: checked here). */
  const attackerIn = (text: string): string[] => {
    const s = R().site;
    return [...SECRET_STRINGS, s.host("b"), s.host("c"), "127.0.0.2"].filter((x) => text.includes(x));
  };

  /** console_tail until an entry matches `re` (the attack happened); every answer is checked after. */
  const consoleUntil = (tabId: number, re: RegExp) =>
    pollUntil(`console_tail showing ${re}`, async () => {
      const r = await R().call("console_tail", { tabId });
      return re.test(r.text) ? r : undefined;
    }, { timeoutMs: 10_000, intervalMs: 200 });

  for (const x of ATTACKERS) {
    it(`page text quoting ${x}'s URL in every spelling: snapshot, read_text, find and tabs withhold it, A's own URL stays`, async () => {
      await allowA();
      const { tabId } = await R().open("/fu-text", { x, next: R().site.url(x, "/fu-chosen", { s: QS[x] }) });
      const snap = await R().call("snapshot", { tabId });
      expect(snap.text).toContain("Continue at");
      const text = await R().call("read_text", { tabId });
      await R().call("find", { tabId, text: "Mirror" });
      await R().call("tabs", {});
      await R().expectClean();
      for (const r of [snap, text]) {
        expect(r.text).toContain(WITHHELD);
        expect(r.text).toMatch(new RegExp(`${R().site.origin.a.replace(/\./g, "\\.")}/fu-own-path\\?t=tab\\d+x&keep=yes`));
      }
    });

    it(`an error a page function throws names ${x}'s URL: evaluate and invoke withhold it`, async () => {
      await allowA();
      const { tabId } = await R().open("/fu-text", { x });
      const ev = await R().call("evaluate", { tabId, expression: "fuFail()" });
      const inv = await R().call("invoke", { tabId, path: "fuFail" });
      await R().expectClean();
      expect(ev.text).toContain("the document moved to");
      expect(inv.text).toContain("the document moved to");
    });

    it(`Chrome's CORS error after B redirects to a URL it chose on ${x}: console_tail withholds both URLs, keeps A's origin`, async () => {
      await allowA();
      const { tabId, page } = await R().open("/fu-console", { x });
      await R().call("console_tail", { tabId });
      await page.evaluate(() => (window as unknown as { go(k: string): string }).go("cors"));
      const r = await consoleUntil(tabId, /CORS policy/);
      await R().expectClean();
      expect(r.text).toContain(WITHHELD);
      expect(r.text).toContain(`'${R().site.origin.a}'`);
    });

    it(`a WebSocket to ${x} fails: Chrome's message in console_tail withholds the ws: URL`, async () => {
      await allowA();
      const { tabId, page } = await R().open("/fu-console", { x });
      await R().call("console_tail", { tabId });
      await page.evaluate(() => (window as unknown as { go(k: string): string }).go("ws"));
      await consoleUntil(tabId, /WebSocket/);
      await R().expectClean();
    });

    it(`the page logs ${x}'s URL itself: console_tail withholds it`, async () => {
      await allowA();
      const { tabId, page } = await R().open("/fu-console", { x });
      await R().call("console_tail", { tabId });
      await page.evaluate(() => (window as unknown as { go(k: string): string }).go("log"));
      await consoleUntil(tabId, /upstream moved to/);
      await R().expectClean();
    });

    it(`a CSP violation naming ${x}'s URL: console_tail withholds it`, async () => {
      await allowA();
      const { tabId, page } = await R().open("/fu-csp", { x });
      await R().call("console_tail", { tabId });
      await page.evaluate(() => (window as unknown as { go(): number }).go());
      await consoleUntil(tabId, /Content Security Policy/);
      await R().expectClean();
    });

    it(`A's requests and bodies carry ${x}'s URL: network_tail withholds it, A's URLs stay`, async () => {
      await allowA();
      const { tabId, page } = await R().open("/fu-net", { x });
      await R().call("network_tail", { tabId, bodies: true });
      await page.evaluate(() => (window as unknown as { go(): Promise<number> }).go());
      const r = await pollUntil("the three requests with their bodies", async () => {
        const t = await R().call("network_tail", { tabId, bodies: true });
        const rows = (t.data.entries ?? []) as { body?: string }[];
        return rows.length >= 3 && rows.filter((e) => e.body !== undefined).length >= 3 ? t : undefined;
      }, { timeoutMs: 10_000, intervalMs: 200 });
      // The filter is no oracle: it matches the URLs as shown, never the withheld part.
      const probe = await R().call("network_tail", { tabId, filter: QS[x] });
      const shown = await R().call("network_tail", { tabId, filter: WITHHELD });
      await R().expectClean();
      expect(r.text).toContain(`${R().site.origin.a}/api/fu?next=${WITHHELD}`);
      expect((probe.data.entries as unknown[]).length, probe.text).toBe(0);
      expect((shown.data.entries as unknown[]).length, shown.text).toBe(2);
    });

    for (const format of ["har", "http"] as const) {
      it(`a sensitive capture of A's requests that carry ${x}'s URL: capture_list and the ${format} file withhold it`, async () => {
        await allowA();
        const { tabId, page } = await R().open("/fu-net", { x });
        const started = await R().call("capture_start", { tabId, sensitive: true });
        expect(started.isError, started.text).toBe(false);
        const captureId = started.data.captureId as string;
        await page.evaluate(() => (window as unknown as { go(): Promise<number> }).go());
        await pollUntil("three captured requests", async () => {
          const l = await R().call("capture_list", { captureId });
          return ((l.data.requests ?? []) as unknown[]).length >= 3;
        }, { timeoutMs: 10_000, intervalMs: 200 });
        await R().call("capture_stop", { captureId });
        const ex = await R().call("capture_export", { captureId, format });
        expect(ex.isError, ex.text).toBe(false);
        const uri = (ex.data.file as { uri: string }).uri;
        const read = await R().mcp.client.readResource({ uri });
        const c = read.contents[0] as { text?: string; blob?: string };
        const body = c.text ?? Buffer.from(c.blob ?? "", "base64").toString("utf8");
        expect(body).toContain("/api/fu");
        await R().expectClean();
        expect(attackerIn(body), `the ${format} file carries the attacker's URL`).toEqual([]);
        expect(body).toContain(WITHHELD);
      });
    }
  }
});

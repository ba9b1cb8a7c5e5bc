// The outbound mask (SECURITY I-77): a secret is withheld in every form a browser or page commonly
// writes it, and ordinary text is left alone.
import { describe, expect, it } from "vitest";
import { compileMask } from "../../src/secrets/mask.js";
import { Outbound, type TaintBackend } from "../../src/secrets/outbound.js";
import { MemorySecretBackend, SecretStore } from "../../src/secrets/store.js";

const SECRET = 'p@ss w"rd&+/x';
const ALL_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
const b64url = (s: string) => b64(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const htmlEsc = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/'/g, "&#39;");

/** Every encoding of v the mask must recognise, named. */
function forms(v: string): [string, string][] {
  const u = v.split("").map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
  return [
    ["raw", v],
    ["encodeURIComponent", encodeURIComponent(v)],
    ["encodeURIComponent, lower-case hex", encodeURIComponent(v).replace(/%[0-9A-F]{2}/g, (x) => x.toLowerCase())],
    ["form encoding", new URLSearchParams({ q: v }).toString().slice(2)],
    ["encodeURI", encodeURI(v)],
    ["percent-encoded twice", encodeURIComponent(encodeURIComponent(v))],
    ["JSON", JSON.stringify(v)],
    ["JSON in JSON", JSON.stringify(JSON.stringify(v))],
    ["\\u escapes", u],
    ["HTML entities", htmlEsc(v)],
    ["decimal entities", [...v].map((c) => `&#${c.codePointAt(0)};`).join("")],
    ["base64", b64(v)],
    ["base64 after 1 byte", b64(`x${v}`)],
    ["base64 after 2 bytes (Basic user:pw)", b64(`u:${v}`)],
    ["base64url inside a longer run", b64url(`{"k":"${v}","n":1}`)],
    ["hex", Buffer.from(v, "utf8").toString("hex")],
    ["JS string escapes", v.replace(/["'\\/]/g, (c) => `\\${c}`)],
  ];
}

describe("the outbound mask", () => {
  for (const v of [SECRET, ALL_PUNCT, "pässwörd ✓ 𝄞 日本", "abc\u0000def", "x".repeat(10_000), "pw12"]) {
    const m = compileMask([{ name: "PW", values: [v] }]);
    for (const [how, f] of forms(v)) {
      it(`withholds ${JSON.stringify(v.slice(0, 20))} as ${how}`, () => {
        const out = m.text(`before ${f} after`);
        expect(out).toContain("{{secret:PW}}");
        // No run of the value's characters longer than 3 survives next to the marker.
        for (const piece of out.split("{{secret:PW}}")) {
          if (v.length >= 8) expect(piece.includes(v.slice(0, 8)) || piece.includes(v.slice(-8))).toBe(false);
        }
      });
    }
  }

  it("withholds a value whose spaces a page collapsed or wrote as no-break spaces", () => {
    const m = compileMask([{ name: "PW", values: ["two  spaces here"] }]);
    expect(m.text("x two spaces here y")).toBe("x {{secret:PW}} y");
    expect(m.text("x two\u00a0\u00a0spaces\u00a0here y")).toBe("x {{secret:PW}} y");
  });

  it("masks keys and values of structured content, and leaves ordinary text alone", () => {
    const m = compileMask([{ name: "PW", values: [SECRET] }]);
    expect(m.deep({ [SECRET]: [encodeURIComponent(SECRET), 3, null] })).toEqual({ "{{secret:PW}}": ["{{secret:PW}}", 3, null] });
    const plain = "Order 2024-11-03: 3 items, total 42.50 EUR; see https://shop.example/a?b=c&d=e";
    expect(m.text(plain)).toBe(plain);
  });

  it("is empty without values", () => {
    const m = compileMask([]);
    expect(m.empty).toBe(true);
    expect(m.text(SECRET)).toBe(SECRET);
  });
});

class MemTaint implements TaintBackend {
  tabs: number[] = [];
  async get() {
    return [...this.tabs];
  }
  async set(t: number[]) {
    this.tabs = [...t];
  }
}

describe("Outbound", () => {
  it("masks every stored secret, used or not, locked or not, and after a restart (a new worker) exactly as before", async () => {
    const backend = new MemorySecretBackend();
    const store = new SecretStore(backend);
    await store.add("pw", "password", SECRET, ["https://a.test"]);
    await store.setLocked(true);
    const taint = new MemTaint();
    const before = new Outbound(store, taint);
    await before.received(7);
    // A new worker: a new store object over the same database, a new Outbound over the same session storage.
    const after = new Outbound(new SecretStore(backend), taint);
    const text = `q=${encodeURIComponent(SECRET)}`;
    expect((await before.masker()).text(text)).toBe("q={{secret:pw}}");
    expect((await after.masker()).text(text)).toBe("q={{secret:pw}}");
    expect(await after.holds(7)).toBe(true);
    expect(await after.holds(8)).toBe(false);
    await after.closed(7);
    expect(await new Outbound(store, taint).holds(7)).toBe(false);
  });

  it("gives a document only the secrets bound to its origin", async () => {
    const store = new SecretStore(new MemorySecretBackend());
    await store.add("a", "password", "secret-for-a", ["https://a.test"]);
    await store.add("b", "password", "secret-for-b", ["https://b.test"]);
    const o = new Outbound(store, new MemTaint());
    expect((await o.forOrigin("https://a.test"))?.e).toEqual([{ name: "a", values: ["secret-for-a"] }]);
    expect(await o.forOrigin("https://c.test")).toBeUndefined();
  });

  it("masks a seed's recent codes, and rebuilds when the store changes", async () => {
    const store = new SecretStore(new MemorySecretBackend());
    await store.add("otp", "totp", "JBSWY3DPEHPK3PXP", ["https://a.test"]);
    let now = 1_700_000_000_000;
    const o = new Outbound(store, new MemTaint(), () => now);
    const [code] = [...(await store.resolve(["otp"], now - 5 * 60_000)).values()].map((x) => x.value);
    expect((await o.masker()).text(`code ${code}`)).toBe("code {{secret:otp}}");
    await store.add("pw", "password", "hunter2-new", ["https://a.test"]);
    expect((await o.masker()).text("hunter2-new")).toBe("{{secret:pw}}");
    now += 30_000;
    expect((await o.masker()).text("hunter2-new")).toBe("{{secret:pw}}");
  });
});

describe("secret values at the edges", () => {
  const store = () => new SecretStore(new MemorySecretBackend());
  it("a value of 1 character, or of 10,000, is refused with a typed error naming the limit; nothing is stored", async () => {
    const s = store();
    await expect(s.add("one", "password", "x", ["https://a.test"])).rejects.toMatchObject({ code: "invalid", message: expect.stringContaining("at least 4") });
    await expect(s.add("long", "password", "y".repeat(10_000), ["https://a.test"])).rejects.toMatchObject({ code: "invalid", message: expect.stringContaining("at most 4096") });
    expect(await s.list()).toEqual([]);
    expect(await s.maskValues()).toEqual([]);
  });
  for (const [what, v] of [
    ["every ASCII punctuation character", ALL_PUNCT],
    ["non-ASCII text and a NUL", "pässwörd\u0000日本𝄞"],
    ["4,096 characters", "q".repeat(4095) + "!"],
  ] as const) {
    it(`a value of ${what} round-trips and is masked wherever it shows`, async () => {
      const s = store();
      await s.add("v", "password", v, ["https://a.test"]);
      expect([...(await s.resolve(["v"])).values()][0]?.value).toBe(v);
      const m = await new Outbound(s, new MemTaint()).masker();
      for (const [how, f] of forms(v)) expect(m.text(`[${f}]`), how).toContain("{{secret:v}}");
    });
  }
});

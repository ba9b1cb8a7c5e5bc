import { describe, expect, it } from "vitest";
import { onlySecret, pieces, secretRefs, substitute, SubstituteError, TemplateError } from "../../src/secrets/template.js";
import { base32Decode, hotp, totp } from "../../src/secrets/totp.js";
import { canonicalOrigin, MemorySecretBackend, SecretError, secretProblem, SecretStore } from "../../src/secrets/store.js";

const enc = (s: string) => new TextEncoder().encode(s);

describe("secret references", () => {
  it("finds names once, in order, and refuses a malformed one", () => {
    expect(secretRefs("a {{secret:pw}} b {{secret:otp.1}} {{secret:pw}}")).toEqual(["pw", "otp.1"]);
    expect(secretRefs("no refs {{ secret:x }}")).toEqual([]);
    expect(() => secretRefs("{{secret:has space}}")).toThrow(TemplateError);
    expect(() => secretRefs("{{secret:}}")).toThrow(TemplateError);
  });
  it("onlySecret is one reference and nothing else", () => {
    expect(onlySecret("{{secret:pw}}")).toBe(true);
    expect(onlySecret(" {{secret:pw}}")).toBe(false);
    expect(onlySecret("{{secret:pw}}{{secret:pw}}")).toBe(false);
    expect(onlySecret(42)).toBe(false);
  });
  it("splits text into literal runs and secrets", () => {
    expect(pieces("user {{secret:a}}!")).toEqual([{ text: "user " }, { secret: "a" }, { text: "!" }]);
  });
  it("substitutes only on the secret's origins", () => {
    const b = { pw: { v: "hunter2", o: ["https://a.example"] } };
    const seen: string[] = [];
    expect(substitute("x{{secret:pw}}y", b, "https://a.example", (n) => seen.push(n))).toBe("xhunter2y");
    expect(seen).toEqual(["pw"]);
    expect(() => substitute("{{secret:pw}}", b, "https://b.example")).toThrow(SubstituteError);
    try {
      substitute("{{secret:nope}}", b, "https://a.example");
    } catch (e) {
      expect((e as SubstituteError).code).toBe("secret_not_found");
      // The error names the secret, never a value.
      expect((e as Error).message).not.toContain("hunter2");
    }
    // A name that is an Object.prototype key is no secret.
    expect(() => substitute("{{secret:constructor}}", b, "https://a.example")).toThrow(SubstituteError);
  });
});

describe("TOTP (RFC 6238 / RFC 4226)", () => {
  it("matches the RFC 4226 HOTP vectors", async () => {
    const key = enc("12345678901234567890");
    const want = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"];
    for (const [i, w] of want.entries()) expect(await hotp(key, i)).toBe(w);
  });
  it("matches the RFC 6238 SHA-1 vectors (8 digits)", async () => {
    const key = enc("12345678901234567890");
    const cases: [number, string][] = [[59, "94287082"], [1111111109, "07081804"], [1111111111, "14050471"], [1234567890, "89005924"], [2000000000, "69279037"], [20000000000, "65353130"]];
    for (const [t, w] of cases) expect(await totp(key, t * 1000, 8)).toBe(w);
  });
  it("decodes base32 as sites show it, and refuses anything else", () => {
    // "12345678901234567890" in base32.
    expect(new TextDecoder().decode(base32Decode("gezd gnbv gy3t qojq gezd gnbv gy3t qojq"))).toBe("12345678901234567890");
    expect(() => base32Decode("not base32!")).toThrow();
    expect(() => base32Decode("")).toThrow();
  });
});

describe("secret store", () => {
  it("keeps values encrypted under a non-extractable key and resolves them", async () => {
    const b = new MemorySecretBackend();
    const s = new SecretStore(b);
    await s.add("pw", "password", "hunter2", ["https://a.example", "a.example", "http://127.0.0.1:8080"]);
    expect(await s.list()).toEqual([{ name: "pw", kind: "password", origins: ["https://a.example", "http://127.0.0.1:8080"] }]);
    const key = await b.key();
    expect(key?.extractable).toBe(false);
    const raw = b.raw("pw");
    expect(new TextDecoder().decode(new Uint8Array(raw?.ct ?? new ArrayBuffer(0)))).not.toContain("hunter2");
    expect((await s.resolve(["pw"])).get("pw")?.value).toBe("hunter2");
  });
  it("a totp secret resolves to the current code, not the seed", async () => {
    const s = new SecretStore(new MemorySecretBackend());
    await s.add("otp", "totp", "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", ["https://a.example"]);
    expect((await s.resolve(["otp"], 59_000)).get("otp")?.value).toBe("287082");
  });
  it("fails closed: unknown name, locked, edited origins, no key", async () => {
    const b = new MemorySecretBackend();
    const s = new SecretStore(b);
    await s.add("pw", "password", "hunter2", ["https://a.example"]);
    await expect(s.resolve(["nope"])).rejects.toMatchObject({ code: "secret_not_found" });
    await s.setLocked(true);
    await expect(s.resolve(["pw"])).rejects.toMatchObject({ code: "secret_store_locked" });
    await s.setLocked(false);
    const r = b.raw("pw");
    if (r) r.origins = ["https://evil.example"];
    await expect(s.resolve(["pw"])).rejects.toMatchObject({ code: "secret_store_locked" });
    const b2 = new MemorySecretBackend();
    const s2 = new SecretStore(b2);
    await s2.add("pw", "password", "xyzw", ["https://a.example"]);
    (b2 as unknown as { k: undefined }).k = undefined;
    // A worker that starts later finds the records without their key.
    await expect(new SecretStore(b2).resolve(["pw"])).rejects.toMatchObject({ code: "secret_store_locked" });
    // The lock is stored: a new worker starts locked.
    await s.setLocked(true);
    await expect(new SecretStore(b).resolve(["pw"])).rejects.toMatchObject({ code: "secret_store_locked" });
  });
  it("checks every field before storing", async () => {
    const s = new SecretStore(new MemorySecretBackend());
    await expect(s.add("bad name", "password", "x", ["https://a.example"])).rejects.toBeInstanceOf(SecretError);
    await expect(s.add("n", "magic", "x", ["https://a.example"])).rejects.toBeInstanceOf(SecretError);
    await expect(s.add("n", "password", "", ["https://a.example"])).rejects.toBeInstanceOf(SecretError);
    await expect(s.add("n", "password", "abc", ["https://a.example"])).rejects.toBeInstanceOf(SecretError);
    await expect(s.add("n", "password", "long enough", [])).rejects.toBeInstanceOf(SecretError);
    await expect(s.add("n", "totp", "not-a-seed!", ["https://a.example"])).rejects.toBeInstanceOf(SecretError);
    expect(await s.list()).toEqual([]);
  });
  it("a refusal names the field to fix, the same before sending (options page) and in the store", async () => {
    const cases: [string, string, string, string[], string][] = [
      ["bad name!", "password", "long enough", ["https://a.example"], "name"],
      ["n", "magic", "long enough", ["https://a.example"], "kind"],
      ["n", "password", "abc", ["https://a.example"], "value"],
      ["n", "totp", "not-a-seed!", ["https://a.example"], "value"],
      ["n", "password", "long enough", ["https://a.example/login"], "origins"],
      ["n", "password", "long enough", [], "origins"],
    ];
    const s = new SecretStore(new MemorySecretBackend());
    for (const [name, kind, value, origins, field] of cases) {
      expect(secretProblem(name, kind, value, origins)?.field, `${name} ${kind} ${value} ${origins.join()}`).toBe(field);
      await expect(s.add(name, kind, value, origins)).rejects.toMatchObject({ code: "invalid", field, message: secretProblem(name, kind, value, origins)?.message });
    }
    expect(secretProblem("n", "password", "long enough", ["https://a.example"])).toBeUndefined();
  });
  it("origins are exact http(s) origins", () => {
    expect(canonicalOrigin("Example.COM")).toBe("https://example.com");
    expect(canonicalOrigin("https://example.com:443/")).toBe("https://example.com");
    for (const bad of ["ftp://x.example", "https://x.example/path", "https://u:p@x.example", "*.example.com", "https://x.example/?q"]) {
      expect(() => canonicalOrigin(bad), bad).toThrow(SecretError);
    }
  });
});

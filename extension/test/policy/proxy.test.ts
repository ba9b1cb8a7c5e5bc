// The person's proxy profiles as the options page saves them and the worker applies them: every
// malformed field is refused with a message naming it (SECURITY I-72).
import { describe, expect, it } from "vitest";
import { bypassProblem, checkProxySettings, chromeProxyConfig, defaultProxySettings, hostProblem, pacUrlProblem, parseBypass, profileProblems, readProxySettings, type ProxyProfile } from "../../src/policy/proxy.js";

const fixed = (o: Partial<ProxyProfile> = {}): ProxyProfile => ({ name: "work", kind: "fixed", scheme: "http", host: "proxy.example.com", port: 8080, bypass: [], ...o });

describe("proxy profiles", () => {
  it("default: system active, agents may not switch", () => {
    const d = defaultProxySettings();
    expect(d.active).toBe("system");
    expect(d.agentMaySwitch).toBe(false);
    expect(d.profiles.map((p) => p.name)).toEqual(["system", "direct"]);
    expect(readProxySettings(undefined)).toEqual(d);
    expect(readProxySettings({ agentMaySwitch: "yes" }).agentMaySwitch).toBe(false);
  });

  it("a malformed PAC URL is refused, naming the field", () => {
    for (const [url, msg] of [
      ["", /empty/],
      ["file:///etc/proxy.pac", /must be http:, https: or data:, not file:/],
      ["javascript:alert(1)", /not javascript:/],
      ["chrome://settings", /not chrome:/],
      ["ftp://x.example/p.pac", /not ftp:/],
      ["wpad.example.com/proxy.pac", /is not a URL/],
      ["http://user:pw@wpad.example.com/p.pac", /user name or password/],
      ["http://wpad.example.com/a b.pac", /spaces or control characters/],
      ["http://wpad.example.com/p.pac\nx", /control characters/],
      ["data:application/x-ns-proxy-autoconfig,", /no script/],
      [`http://x.example/${"a".repeat(9000)}`, /longer than 8192/],
    ] as const) {
      expect(pacUrlProblem(url), url).toMatch(msg);
      expect(profileProblems({ name: "pac", kind: "pac", pacUrl: url })[0]?.field, url).toBe("pacUrl");
    }
    expect(pacUrlProblem("http://wpad.example.com/proxy.pac")).toBeNull();
    expect(pacUrlProblem("https://wpad.example.com:8443/p.pac?x=1")).toBeNull();
    expect(pacUrlProblem('data:application/x-ns-proxy-autoconfig,function FindProxyForURL(u, h) { return "DIRECT"; }')).toBeNull();
  });

  it("host, port and scheme of a fixed proxy", () => {
    expect(profileProblems(fixed())).toEqual([]);
    expect(profileProblems(fixed({ host: "10.0.0.1", scheme: "socks5", port: 1080 }))).toEqual([]);
    expect(profileProblems(fixed({ host: "[::1]" }))).toEqual([]);
    expect(hostProblem("")).toMatch(/empty/);
    expect(hostProblem("http://proxy.example.com")).toMatch(/only the host/);
    expect(hostProblem("proxy.example.com:8080")).toMatch(/only the host/);
    expect(hostProblem("pro xy")).toMatch(/only the host/);
    expect(hostProblem("999.1.1.1")).toMatch(/not a valid IPv4/);
    expect(hostProblem("-bad-.example")).toMatch(/not a valid host name/);
    expect(hostProblem("a_b.example")).toMatch(/not a valid host name/);
    for (const port of [0, 65536, 80.5, Number.NaN, "8080"]) {
      expect(profileProblems(fixed({ port: port as number })).map((p) => p.field), String(port)).toEqual(["port"]);
    }
    expect(profileProblems(fixed({ scheme: "ftp" as never })).map((p) => p.field)).toEqual(["scheme"]);
    expect(profileProblems({ name: "x", kind: "vpn" }).map((p) => p.field)).toEqual(["kind"]);
    expect(profileProblems({ name: "", kind: "direct" }).map((p) => p.field)).toEqual(["name"]);
    expect(profileProblems({ name: "a\nb", kind: "direct" }).map((p) => p.field)).toEqual(["name"]);
  });

  it("bypass list syntax", () => {
    expect(parseBypass("<local>, *.internal.example.com\n10.0.0.0/8; ,")).toEqual(["<local>", "*.internal.example.com", "10.0.0.0/8"]);
    for (const ok of ["<local>", "<-loopback>", "example.com", "*.example.com", ".example.com", "*", "example.com:8080", "https://example.com", "10.0.0.0/8", "192.168.1.1", "[::1]", "[fe80::]/10", "*example.com"]) {
      expect(bypassProblem(ok), ok).toBeNull();
    }
    expect(bypassProblem("<lan>")).toMatch(/only <local> and <-loopback>/);
    expect(bypassProblem("exa mple.com")).toMatch(/not valid/);
    expect(bypassProblem("example.com/path")).toMatch(/not valid/);
    expect(bypassProblem("10.0.0.0/33")).toMatch(/at most 32/);
    expect(bypassProblem("300.0.0.1")).toMatch(/not a valid IPv4/);
    expect(bypassProblem("example.com:70000")).toMatch(/port/);
    const p = profileProblems(fixed({ bypass: ["ok.example", "bad entry"] }));
    expect(p).toEqual([{ field: "bypass", message: expect.stringContaining('"bad entry"') }]);
  });

  it("saving: the first problem names the profile and field; names unique; built-ins kept", () => {
    expect(() => checkProxySettings({ profiles: [{ name: "pac", kind: "pac", pacUrl: "file:///p.pac" }] })).toThrow(/profile "pac": a PAC URL must be http:, https: or data:, not file:/);
    try {
      checkProxySettings({ profiles: [{ name: "pac", kind: "pac", pacUrl: "file:///p.pac" }] });
    } catch (e) {
      expect(e).toMatchObject({ profile: "pac", field: "pacUrl" });
    }
    expect(() => checkProxySettings({ profiles: [fixed(), fixed({ name: "WORK" })] })).toThrow(/two profiles are named "WORK"/);
    const s = checkProxySettings({ profiles: [{ name: "system", kind: "fixed", host: "evil.example", port: 1 }, fixed({ host: " proxy.example.com ", junk: 1 } as never)], active: "work", agentMaySwitch: true });
    expect(s.profiles).toEqual([{ name: "system", kind: "system" }, { name: "direct", kind: "direct" }, fixed()]);
    expect(s.active).toBe("work");
    expect(s.agentMaySwitch).toBe(true);
    expect(checkProxySettings({ profiles: [], active: "gone" }).active).toBe("system");
  });

  it("a malformed profile stored somehow is kept as stored, to be refused when used", () => {
    const s = readProxySettings({ profiles: [{ name: "bad", kind: "pac", pacUrl: "file:///p.pac" }, 7, null], active: "bad" });
    expect(s.profiles.map((p) => p.name)).toEqual(["system", "direct", "bad"]);
    expect(profileProblems(s.profiles[2])[0]?.field).toBe("pacUrl");
  });

  it("what chrome.proxy is given", () => {
    expect(chromeProxyConfig({ name: "system", kind: "system" })).toBeUndefined();
    expect(chromeProxyConfig({ name: "direct", kind: "direct" })).toEqual({ mode: "direct" });
    expect(chromeProxyConfig(fixed({ bypass: ["<local>"] }))).toEqual({ mode: "fixed_servers", rules: { singleProxy: { scheme: "http", host: "proxy.example.com", port: 8080 }, bypassList: ["<local>"] } });
    expect(chromeProxyConfig({ name: "p", kind: "pac", pacUrl: "http://w.example/p.pac" })).toEqual({ mode: "pac_script", pacScript: { url: "http://w.example/p.pac", mandatory: true } });
  });
});

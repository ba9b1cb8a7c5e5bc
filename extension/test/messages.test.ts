import { describe, expect, it } from "vitest";
import { parseLaunchHash } from "../src/connect/hash.js";
import { defaultDeviceName } from "../src/background/state.js";
import { InvalidDaemonUrlError, isStateMessage, parseRequest, validateDaemonUrl } from "../src/shared/messages.js";

describe("parseRequest", () => {
  it("accepts each well-formed request", () => {
    expect(parseRequest({ type: "torii.getState" })).toEqual({ type: "torii.getState" });
    expect(parseRequest({ type: "torii.pair" })).toEqual({ type: "torii.pair" });
    expect(parseRequest({ type: "torii.pair", daemonUrl: "ws://x/acp" })).toEqual({ type: "torii.pair", daemonUrl: "ws://x/acp" });
    expect(parseRequest({ type: "torii.setPaused", paused: true })).toEqual({ type: "torii.setPaused", paused: true });
    expect(parseRequest({ type: "torii.connect", daemonUrl: "ws://a", otp: "s" })).toEqual({ type: "torii.connect", daemonUrl: "ws://a", otp: "s" });
  });
  it("rejects malformed or foreign messages", () => {
    expect(parseRequest(null)).toBeNull();
    expect(parseRequest("torii.getState")).toBeNull();
    expect(parseRequest({ type: "torii.state", state: {} })).toBeNull(); // our own broadcast
    expect(parseRequest({ type: "torii.setPaused", paused: "yes" })).toBeNull();
    expect(parseRequest({ type: "torii.connect", daemonUrl: "ws://a" })).toBeNull();
    expect(parseRequest({ type: "torii.pair", daemonUrl: 5 })).toBeNull();
  });
  it("recognises state broadcasts", () => {
    expect(isStateMessage({ type: "torii.state", state: {} })).toBe(true);
    expect(isStateMessage({ type: "torii.getState" })).toBe(false);
  });
});

describe("validateDaemonUrl", () => {
  it("keeps ws and wss addresses", () => {
    expect(validateDaemonUrl(" ws://127.0.0.1:7317/acp ")).toBe("ws://127.0.0.1:7317/acp");
    expect(validateDaemonUrl("wss://gw.example:443/acp")).toBe("wss://gw.example/acp");
  });
  it("keeps ws:// on loopback only (SECURITY I-99)", () => {
    for (const ok of ["ws://localhost:7317/acp", "ws://127.0.0.1/acp", "ws://127.1.2.3:80/acp", "ws://[::1]:7317/acp", "ws://LOCALHOST/acp"]) {
      expect(() => validateDaemonUrl(ok)).not.toThrow();
    }
    for (const bad of ["ws://gw.example/acp", "ws://10.0.0.5:8443/acp", "ws://[::2]/acp", "ws://localhost.evil.example/acp", "ws://128.0.0.1/acp"]) {
      expect(() => validateDaemonUrl(bad)).toThrow(/wss:\/\//);
    }
    expect(() => validateDaemonUrl("ws://gw.example:8443/acp")).toThrow("wss://gw.example:8443/acp");
    expect(validateDaemonUrl("wss://10.0.0.5:8443/acp")).toBe("wss://10.0.0.5:8443/acp");
  });
  it("refuses other schemes and credentials", () => {
    for (const bad of ["http://127.0.0.1/acp", "javascript:alert(1)", "not a url", "ws://u:p@127.0.0.1/acp"]) {
      expect(() => validateDaemonUrl(bad)).toThrow(InvalidDaemonUrlError);
    }
  });
});

describe("parseLaunchHash", () => {
  it("reads daemon and otp", () => {
    expect(parseLaunchHash("#daemon=ws%3A%2F%2F127.0.0.1%3A7317%2Facp&otp=abc_-1")).toEqual({
      daemonUrl: "ws://127.0.0.1:7317/acp",
      otp: "abc_-1",
    });
  });
  it("needs both", () => {
    expect(parseLaunchHash("#daemon=ws://x")).toBeNull();
    expect(parseLaunchHash("")).toBeNull();
  });
});

describe("defaultDeviceName", () => {
  it("names the OS", () => {
    expect(defaultDeviceName("Linux x86_64")).toBe("Chrome on Linux");
    expect(defaultDeviceName("macOS")).toBe("Chrome on macOS");
    expect(defaultDeviceName("Win32")).toBe("Chrome on Windows");
    expect(defaultDeviceName(undefined)).toBe("Chrome");
  });
});

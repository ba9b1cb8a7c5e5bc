import { describe, expect, it } from "vitest";
import { gatewayLine } from "../src/popup/gateway.js";

describe("gatewayLine (SECURITY I-99)", () => {
  it("always names the gateway's host, whatever the state", () => {
    const url = "wss://torii.example.com:8443/acp";
    expect(gatewayLine({ status: "connected", daemonUrl: url })).toBe("Connected to torii.example.com:8443");
    expect(gatewayLine({ status: "paused", daemonUrl: url })).toBe("Connected to torii.example.com:8443 (paused)");
    for (const status of ["connecting", "authenticating", "pairing"] as const) {
      expect(gatewayLine({ status, daemonUrl: url })).toBe("Connecting to torii.example.com:8443");
    }
    for (const status of ["disconnected", "error"] as const) {
      expect(gatewayLine({ status, daemonUrl: url })).toBe("Gateway: torii.example.com:8443 (not connected)");
    }
    expect(gatewayLine({ status: "connected", daemonUrl: "ws://127.0.0.1:7317/acp" })).toBe("Connected to 127.0.0.1:7317");
  });
  it("says when there is none", () => {
    expect(gatewayLine({ status: "disconnected", daemonUrl: "" })).toBe("Gateway: none set");
  });
});

// A user-agent override: what is refused, and the platform and client hints it implies.
import { describe, expect, it } from "vitest";
import { identityOf, userAgentProblem } from "../../src/tools/uadata.js";

const WIN_CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.86 Safari/537.36";

describe("user agent override", () => {
  it("refuses line breaks, control and non-ASCII characters, empty, over 1 KB", () => {
    expect(userAgentProblem("Agent/1.0\r\nX-Injected: 1")).toMatch(/line break/);
    expect(userAgentProblem("Agent/1.0\nX: 1")).toMatch(/line break/);
    expect(userAgentProblem("Agent\u0000/1")).toMatch(/printable ASCII/);
    expect(userAgentProblem("Agent/1 é")).toMatch(/printable ASCII/);
    expect(userAgentProblem("   ")).toMatch(/empty.*reset:true/);
    expect(userAgentProblem("A".repeat(1025))).toMatch(/1025 bytes; at most 1024/);
    expect(userAgentProblem("A".repeat(1024))).toBeNull();
    expect(userAgentProblem(WIN_CHROME)).toBeNull();
  });

  it("Chrome on Windows: Windows client hints and Win32", () => {
    const id = identityOf(WIN_CHROME);
    expect(id.platform).toBe("Win32");
    expect(id.metadata).toMatchObject({ platform: "Windows", platformVersion: "10.0.0", architecture: "x86", bitness: "64", mobile: false, fullVersion: "131.0.6778.86" });
    expect(id.metadata?.brands).toEqual([{ brand: "Not_A Brand", version: "24" }, { brand: "Chromium", version: "131" }, { brand: "Google Chrome", version: "131" }]);
  });

  it("Android Chrome is mobile with its model; macOS; Edge's brand", () => {
    const a = identityOf("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36");
    expect(a.metadata).toMatchObject({ platform: "Android", platformVersion: "14", model: "Pixel 8", mobile: true });
    expect(a.platform).toBe("Linux armv8l");
    const m = identityOf("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36");
    expect(m).toMatchObject({ platform: "MacIntel", metadata: { platform: "macOS", platformVersion: "10.15.7" } });
    const e = identityOf(`${WIN_CHROME} Edg/131.0.2903.70`);
    expect(e.metadata?.brands.map((b) => b.brand)).toEqual(["Not_A Brand", "Chromium", "Microsoft Edge"]);
  });

  it("browsers that send no client hints get none", () => {
    expect(identityOf("Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0")).toEqual({ platform: "Linux x86_64" });
    expect(identityOf("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0 Mobile/15E148 Safari/604.1").metadata).toBeUndefined();
    expect(identityOf("curl/8.5.0")).toEqual({ platform: "" });
  });
});

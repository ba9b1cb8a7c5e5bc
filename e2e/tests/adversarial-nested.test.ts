// Adversarial: frames nested three deep across two origins, and A's own opaque documents
// (sandboxed srcdoc, sandboxed frame of A's URL, data:). Reads show nothing of B or C at any depth;
// an opaque document is refused like a foreign one, whatever URL it was loaded from.
import { expect, it } from "vitest";
import { useAttackRig } from "../src/attack/rig.ts";
import { MARK, OPAQUE_MARK, type Role } from "../src/attack/secrets.ts";
import { describeBrowser } from "../src/harness.ts";
import { pollUntil } from "../src/util.ts";

const CHAINS: [Role, Role][] = [
  ["b", "a"],
  ["c", "a"],
  ["b", "c"],
  ["c", "b"],
];

describeBrowser("adversarial: nested and opaque frames", () => {
  const R = useAttackRig("adv-nested");

  for (const [x, y] of CHAINS) {
    for (const [tool, args] of [
      ["snapshot", {}],
      ["read_text", {}],
      ["find", { text: MARK[x] }],
      ["screenshot", { format: "png" }],
    ] as const) {
      it(`A → ${x} → ${y}, three deep: ${tool} shows nothing of ${x}${y === "a" ? "" : ` or ${y}`}`, async () => {
        const { tabId, page } = await R().open("/nested", { x, y });
        await pollUntil("the innermost frame", () => page.frames().some((f) => f.url().includes("/nest-leaf")), { timeoutMs: 8_000, intervalMs: 30 });
        const res = await R().call(tool, { tabId, ...args }, 15_000);
        await R().expectClean();
        await R().expectNoAttackerPixels(res);
      });
    }
    // The outer frame's middle is the innermost frame: when that one is A's, the click may land.
    it(`A → ${x} → ${y}: mouse_click on the outer frame ${y === "a" ? "reaches at most A's leaf" : "is refused"}, nothing reaches ${x}${y === "a" ? "" : ` or ${y}`}`, async () => {
      const { tabId, page } = await R().open("/nested", { x, y });
      await R().frameReady(page, x);
      const res = await R().call("mouse_click", { tabId, selector: "#outer" }, 15_000);
      await R().expectClean();
      if (y !== "a") expect(res.error?.code, res.text).toBe("origin_not_allowed");
    });
  }

  for (const kind of ["sandbox-srcdoc", "sandbox-src", "data"] as const) {
    for (const tool of ["snapshot", "read_text"] as const) {
      it(`A's opaque ${kind} frame: ${tool} returns none of its content`, async () => {
        const { tabId, page } = await R().open("/opaque", { kind });
        await pollUntil("the opaque frame", async () => {
          for (const f of page.frames()) if (f !== page.mainFrame() && (await f.content().catch(() => "")).includes(OPAQUE_MARK)) return true;
          return false;
        }, { timeoutMs: 8_000, intervalMs: 50 });
        const res = await R().call(tool, { tabId }, 15_000);
        expect(res.isError, res.text).toBe(false);
        await R().expectClean({ extra: [OPAQUE_MARK] });
      });
    }
    it(`A's opaque ${kind} frame: mouse_click into it is refused`, async () => {
      const { tabId, page } = await R().open("/opaque", { kind });
      await pollUntil("the opaque frame", () => page.frames().length > 1, { timeoutMs: 8_000, intervalMs: 50 });
      const res = await R().call("mouse_click", { tabId, selector: "#op" }, 15_000);
      await R().expectClean({ extra: [OPAQUE_MARK] });
      expect(res.error?.code, res.text).toBe("origin_not_allowed");
    });
  }
});

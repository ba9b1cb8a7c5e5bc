// Adversarial: check-then-act races. A page that bounces between A and an attacker, or flashes the
// attacker's full-viewport frame, is read over and over: a bounded number of tries, zero leaks
// allowed (no marker, title or host in any result, no attacker pixel in any screenshot).
import { expect, it } from "vitest";
import { useAttackRig } from "../src/attack/rig.ts";
import { ATTACKERS } from "../src/attack/secrets.ts";
import { describeBrowser } from "../src/harness.ts";

const TRIES = 20;

describeBrowser("adversarial: check-then-act races", () => {
  const R = useAttackRig("adv-races");

  /** Calls `tool` TRIES times; counts screenshots that showed the attacker; then the usual checks. */
  async function race(tool: string, args: Record<string, unknown>) {
    let shots = 0;
    let leakedShots = 0;
    for (let i = 0; i < TRIES; i++) {
      const res = await R().call(tool, args, 8_000).catch((e: Error) => {
        throw new Error(`${tool} try ${i + 1} got no answer: ${e.message} (a check that cannot be made must fail with a typed error)`);
      });
      for (const img of res.images) {
        shots++;
        const px = await R().attackerPixels(img);
        if (px.b + px.c > 0) leakedShots++;
      }
    }
    if (leakedShots) throw new Error(`LEAK: ${leakedShots} of ${shots} screenshots show attacker pixels`);
    await R().expectClean({ kinds: [] });
  }

  for (const x of ATTACKERS) {
    for (const [tool, args] of [
      ["screenshot", { format: "png" }],
      ["tabs", {}],
      ["snapshot", {}],
      ["read_text", {}],
    ] as const) {
      it(`${tool}${"format" in args ? ` (${args.format})` : ""} while the tab bounces A ↔ ${x}: ${TRIES} tries, zero leaks`, async () => {
        const gate = `${x}-${tool}-${Math.random().toString(36).slice(2)}`;
        const { tabId } = await R().open("/bounce", { x, ms: 40, gate });
        R().site.openGate(gate);
        await race(tool, tool === "tabs" ? {} : { tabId, ...args });
      });
    }

    for (const [tool, args] of [
      ["screenshot", { format: "png" }],
      ["screenshot", { format: "png", fullPage: true }],
      ["snapshot", {}],
    ] as const) {
      it(`${tool}${"fullPage" in args ? " fullPage" : ""} while A flashes ${x}'s full-viewport frame: ${TRIES} tries, zero leaks`, async () => {
        const { tabId, page } = await R().open("/flash", { x, ms: 15 });
        await R().frameReady(page, x);
        await race(tool, { tabId, ...args });
      });
    }
  }

  it("control: the pixel check sees B's colour in a screenshot of B's own page", async () => {
    const { page } = await R().open("/nest-leaf");
    await page.goto(R().site.url("b", "/catch"));
    const px = await R().attackerPixels({ data: (await page.screenshot({ type: "png" })).toString("base64"), mimeType: "image/png" });
    expect(px.b).toBeGreaterThan(px.total / 2);
  });
});

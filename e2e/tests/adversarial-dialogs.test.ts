// Adversarial: JavaScript dialogs raised by a frame of another origin. Their text never reaches the
// agent (tabs, the action that raised it, any later call), and the agent cannot answer them: only
// the person can. A's own dialog is the control that shows the channel works.
import { expect, it } from "vitest";
import { useAttackRig } from "../src/attack/rig.ts";
import { ATTACKERS, type Attacker } from "../src/attack/secrets.ts";
import { describeBrowser } from "../src/harness.ts";

const DIALOGS = ["alert", "confirm", "prompt"] as const;
const an = (d: string) => (d === "alert" ? `an ${d}` : `a ${d}`);
const ANSWER = "agent-answer-77e1";

describeBrowser("adversarial: dialogs of foreign frames", () => {
  const R = useAttackRig("adv-dialogs");

  /** Opens A with x's frame raising `dialog` at load, and waits until Chrome shows it. */
  async function withDialog(x: Attacker, dialog: string, when: "load" | "message") {
    const o = await R().open("/dialog-frame", { x, dialog, when });
    if (when === "message") {
      await R().frameReady(o.page, x);
      await R().call("click", { tabId: o.tabId, selector: "#poke" }, 15_000);
    }
    await R().dialogShown(o.page);
    return o;
  }

  /** The attacker never learnt an answer: its page stays blocked in the dialog, or beacons none. */
  async function noAnswer(x: Attacker) {
    const got = (await R().reached(x, ["dialog-result"])).map((b) => b.data);
    expect(got, `${x}'s dialog was answered`).toEqual([]);
  }

  for (const x of ATTACKERS) {
    for (const d of DIALOGS) {
      it(`${x}'s frame raises ${an(d)} at load: tabs does not show its text`, async () => {
        await withDialog(x, d, "load");
        const t = await R().call("tabs");
        expect(t.isError, t.text).toBe(false);
        await R().expectClean();
      });

      it(`${x}'s frame raises ${an(d)} after A's button pokes it: the click's result carries no text`, async () => {
        const { tabId, page } = await R().open("/dialog-frame", { x, dialog: d, when: "message" });
        await R().frameReady(page, x);
        const res = await R().call("click", { tabId, selector: "#poke", observe: "text" }, 15_000);
        await R().expectClean();
        if (res.isError) expect(res.error?.code, res.text).toBe("dialog_blocking");
      });

      it(`${x}'s ${d}: the agent's next read is dialog_blocking without its text`, async () => {
        const { tabId } = await withDialog(x, d, "load");
        const res = await R().call("read_text", { tabId }, 10_000);
        await R().expectClean();
        expect(res.error?.code, res.text).toBe("dialog_blocking");
      });

      it(`${x}'s ${d}: handle_dialog accept is refused (only the person can answer)`, async () => {
        const { tabId } = await withDialog(x, d, "message");
        const res = await R().call("handle_dialog", { tabId, accept: true, ...(d === "prompt" ? { promptText: ANSWER } : {}) }, 10_000);
        await R().expectClean({ extra: [ANSWER] });
        await noAnswer(x);
        expect(res.error?.code, res.text).toBe("origin_not_allowed");
      });

      it(`${x}'s ${d}: handle_dialog dismiss is refused too`, async () => {
        const { tabId } = await withDialog(x, d, "load");
        const res = await R().call("handle_dialog", { tabId, accept: false }, 10_000);
        await R().expectClean();
        await noAnswer(x);
        expect(res.error?.code, res.text).toBe("origin_not_allowed");
      });
    }

    it(`${x}'s alert: an action (press_key) while it is open is dialog_blocking and nothing reaches ${x}`, async () => {
      const { tabId } = await withDialog(x, "alert", "load");
      const res = await R().call("press_key", { tabId, key: "Enter" }, 10_000);
      await R().expectClean();
      await noAnswer(x);
      expect(res.error?.code, res.text).toBe("dialog_blocking");
    });
  }

  it("control: A's own confirm is shown with its text and the agent may answer it", async () => {
    const { tabId } = await R().open("/own-dialog");
    const res = await R().call("click", { tabId, selector: "#ask" }, 15_000);
    expect(JSON.stringify(res.data) + res.text).toContain("A-DIALOG-TEXT");
    const ans = await R().call("handle_dialog", { tabId, accept: true }, 10_000);
    expect(ans.isError, ans.text).toBe(false);
    expect((await R().reached("a", ["a-dialog-result"])).map((b) => b.data)).toEqual(["true"]);
    await R().expectClean();
  });
});

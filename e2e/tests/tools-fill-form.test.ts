// fill_form through the real path (TS SDK client → `torii mcp` → daemon → extension → page): a
// form of 14 fields of every kind filled in one call and read back from the page; every bad input
// refused before any field is touched (judged from the page's own event log), the password guard,
// the frame's origin and the effect guard applied to the batch, and nothing ever submitted.
import type { Page } from "playwright-core";
import { beforeEach, expect, test } from "vitest";
import { describeBrowser } from "../src/harness.ts";
import { setPolicy } from "../src/safety.ts";
import { useToolsRig } from "../src/tools-rig.ts";
import { pollUntil } from "../src/util.ts";

const PASSWORD = "Pw-S3ntinel-fill-form";

/** The fields by accessible name in form-all.html, with the value each takes. */
const FIELDS: [string, unknown][] = [
  ["Full name", "Ada Lovelace"],
  ["Email", "ada@example.test"],
  ["Password", PASSWORD],
  ["Age", "36"],
  ["Birthday", "1815-12-10"],
  ["About you", "Line 1\nLine 2"],
  ["Country", "Japan"],
  ["Languages", ["en", "French"]],
  ["I accept the terms", true],
  ["Send me news", false],
  ["Pro", true],
  ["Volume", "7"],
  ["Favourite colour", "#336699"],
  ["Bio", "Analyst"],
];

interface FormState {
  values: string[];
  langs: string[];
  checked: boolean[];
  bio: string;
  events: string[];
  out: string;
}

async function formState(page: Page): Promise<FormState> {
  return page.evaluate(() => {
    const v = (id: string) => (document.getElementById(id) as HTMLInputElement).value;
    const c = (id: string) => (document.getElementById(id) as HTMLInputElement).checked;
    return {
      values: ["name", "email", "password", "age", "birthday", "about", "country", "volume", "colour"].map(v),
      langs: Array.from((document.getElementById("langs") as HTMLSelectElement).selectedOptions).map((o) => o.value),
      checked: [c("terms"), c("news"), c("free"), c("pro")],
      bio: (document.getElementById("bio") as HTMLElement).innerText,
      events: (window as unknown as { events: string[] }).events,
      out: document.getElementById("out")?.textContent ?? "",
    };
  });
}

const UNTOUCHED = { values: ["", "", "", "", "", "", "", "5", "#000000"], langs: [], checked: [false, true, true, false], bio: "", events: [], out: "" };

/** A ref for each field from one snapshot, by its accessible name. */
function fieldsOf(snapshot: string): { ref: string; value: unknown }[] {
  return FIELDS.map(([name, value]) => {
    const ref = new RegExp(`"${name}" \\[([a-gi-z]+\\d+)\\]`).exec(snapshot)?.[1];
    if (!ref) throw new Error(`no ref for ${name} in:\n${snapshot}`);
    return { ref, value };
  });
}

describeBrowser("fill_form", () => {
  const rig = useToolsRig();
  const ext = () => {
    const p = rig().browser.context.pages().find((x) => x.url().startsWith("chrome-extension://"));
    if (!p) throw new Error("no extension page open");
    return p;
  };
  const policy = (o: { passwords?: boolean; cross?: boolean; submit?: "allow" | "deny" } = {}) =>
    setPolicy(ext(), {
      rules: [
        { pattern: `127.0.0.1:${rig().site.port}`, act: true, ...(o.passwords !== false ? { allowPassword: true } : {}), approvals: { submit: o.submit ?? "allow" } },
        ...(o.cross !== false ? [{ pattern: `127.0.0.1:${rig().site.crossPort}`, act: true }] : []),
      ],
      actMode: true,
    });
  beforeEach(async () => {
    await policy();
  });

  async function openForm(query = ""): Promise<{ tabId: number; page: Page; fields: { ref: string; value: unknown }[] }> {
    const { tabId, page } = await rig().open(`form-all.html${query}`);
    const snap = await rig().mcp.ok("snapshot", { tabId });
    return { tabId, page, fields: fieldsOf(snap.text) };
  }

  test("14 fields of every kind in one call, read back from the page; nothing submitted", async () => {
    const { tabId, page, fields } = await openForm();
    const r = await rig().mcp.ok("fill_form", { tabId, fields, allowPassword: true });
    expect(r.text).toBe("filled 14 fields");
    expect(r.data).toMatchObject({ tabId, ok: true, filled: 14 });
    const s = await formState(page);
    expect(s.values).toEqual(["Ada Lovelace", "ada@example.test", PASSWORD, "36", "1815-12-10", "Line 1\nLine 2", "jp", "7", "#336699"]);
    expect(s.langs).toEqual(["en", "fr"]);
    expect(s.checked).toEqual([true, false, false, true]);
    expect(s.bio).toBe("Analyst");
    expect(s.events.filter((e) => e.startsWith("submit"))).toEqual([]);
    expect(s.out).toBe("");
    expect(page.url()).toContain("form-all.html");
    // The password reached the page and nothing of it came back to the agent.
    expect(JSON.stringify(r)).not.toContain(PASSWORD);
  });

  test("fill and look in one call: observe shows the filled form", async () => {
    const { tabId, fields } = await openForm();
    const r = await rig().mcp.ok("fill_form", { tabId, fields: fields.filter((_, i) => i !== 2), observe: "snapshot" });
    expect(r.text).toContain("filled 13 fields");
    expect(r.text).toMatch(/checkbox "I accept the terms" \[[a-gi-z]+\d+\] \[checked\]/);
  });

  /** The call fails with `code`, its message matching, and the page got no event at all. */
  async function refused(args: Record<string, unknown>, code: string, msg: RegExp, page: Page): Promise<void> {
    const r = await rig().mcp.call("fill_form", args);
    expect(r.isError, r.text).toBe(true);
    expect(r.error?.code, r.text).toBe(code);
    expect(r.text).toMatch(msg);
    expect(await formState(page)).toEqual(UNTOUCHED);
  }

  test("an unknown ref (never issued) after 13 good fields: stale_ref naming it, the form untouched", async () => {
    const { tabId, page, fields } = await openForm();
    fields[13] = { ref: "e987654", value: "x" };
    await refused({ tabId, fields, allowPassword: true }, "stale_ref", /fields\.13: ref e987654/, page);
  });

  test("a stale ref (from before a reload): stale_ref, the new document untouched", async () => {
    const { tabId, page, fields } = await openForm();
    await rig().mcp.ok("reload", { tabId });
    await refused({ tabId, fields, allowPassword: true }, "stale_ref", /stale_ref: /, page);
  });

  test("a value of the wrong kind (a boolean for a text field, a string for a checkbox, a list for a select): invalid_argument, untouched", async () => {
    const { tabId, page, fields } = await openForm();
    for (const [i, value, msg] of [
      [0, true, /fields\.0: value: a boolean, but this <input type=text> takes a string/],
      [8, "yes", /fields\.8: value: a string, but this <input type=checkbox> takes true or false/],
      [6, ["fr"], /fields\.6: value: a list, but this <select> takes one option/],
      [3, "thirty", /fields\.3: value: the <input type=number> does not take "thirty"/],
      [5, 42, /fields\.5\.value: expected a string, a boolean or a non-empty list of strings/],
    ] as const) {
      const bad = fields.map((f, k) => (k === i ? { ...f, value } : f));
      await refused({ tabId, fields: bad, allowPassword: true }, "invalid_argument", msg, page);
    }
  });

  test("a password field without the switch: password_field, nothing of the batch filled", async () => {
    const { tabId, page, fields } = await openForm();
    // The call's flag missing.
    await refused({ tabId, fields }, "password_field", /fields\.2: password field; nothing was filled/, page);
    // The flag given, but the person's switch for this origin off.
    await policy({ passwords: false });
    await refused({ tabId, fields, allowPassword: true }, "password_field", /fields\.2: password field/, page);
    expect(await page.evaluate(() => (document.getElementById("password") as HTMLInputElement).value)).toBe("");
  });

  test("a field in a frame whose origin is off the allowlist: origin_not_allowed, the allowed frame's field untouched", async () => {
    const { tabId, page } = await rig().open(`iframes.html?x=${rig().site.crossPort}`);
    const cross = await pollUntil("the cross-origin frame", () => page.frames().find((f) => f.url().includes(`:${rig().site.crossPort}/`)), { timeoutMs: 10_000, intervalMs: 50 });
    await cross.waitForLoadState("load");
    const snap = await pollUntil("both frames' fields in the outline", async () => {
      const s = await rig().mcp.ok("snapshot", { tabId });
      return (s.text.match(/textbox "Card number" \[[a-gi-z]+\d+\]/g) ?? []).length === 2 ? s.text : undefined;
    }, { timeoutMs: 10_000, intervalMs: 200 });
    const refs = [...snap.matchAll(/textbox "Card number" \[([a-gi-z]+\d+)\]/g)].map((m) => m[1] as string);
    // The person takes the second origin off the list; the agent still holds a ref from its frame.
    await policy({ cross: false });
    const r = await rig().mcp.call("fill_form", { tabId, fields: refs.map((ref) => ({ ref, value: "4242 4242" })) });
    expect(r.error?.code, r.text).toBe("origin_not_allowed");
    expect(r.text).not.toContain(String(rig().site.crossPort));
    const same = page.frames().find((f) => f.url().includes(`:${rig().site.port}/frame-child.html`));
    expect(await same?.evaluate(() => (document.getElementById("card") as HTMLInputElement).value)).toBe("");
    expect(await cross.evaluate(() => (document.getElementById("card") as HTMLInputElement).value)).toBe("");
  });

  test("a password field in another origin's frame follows that origin's switch, not the tab's", async () => {
    // Passwords are allowed for the tab's origin, not for the frame's.
    const { tabId, page } = await rig().open(`form-frames.html?x=${rig().site.crossPort}`);
    const frame = await pollUntil("the partner frame", () => page.frames().find((f) => f.url().includes("form-frame-login.html")), { timeoutMs: 10_000, intervalMs: 50 });
    await frame.waitForLoadState("load");
    const snap = await pollUntil("the frame's fields in the outline", async () => {
      const s = await rig().mcp.ok("snapshot", { tabId });
      return /"Frame password" \[[a-gi-z]+\d+\]/.test(s.text) ? s.text : undefined;
    }, { timeoutMs: 10_000, intervalMs: 200 });
    const ref = (name: string) => new RegExp(`"${name}" \\[([a-gi-z]+\\d+)\\]`).exec(snap)?.[1] as string;
    const both = [
      { ref: ref("Top user"), value: "ada" },
      { ref: ref("Top password"), value: PASSWORD },
      { ref: ref("Frame user"), value: "ada" },
      { ref: ref("Frame password"), value: PASSWORD },
    ];
    const r = await rig().mcp.call("fill_form", { tabId, fields: both, allowPassword: true });
    expect(r.error?.code, r.text).toBe("password_field");
    expect(r.text).toMatch(/fields\.3: password field; nothing was filled/);
    const values = (f: typeof frame) => f.evaluate(() => ["user", "password"].map((id) => (document.getElementById(id) as HTMLInputElement).value));
    expect(await values(page.mainFrame())).toEqual(["", ""]);
    expect(await values(frame)).toEqual(["", ""]);
    // The tab's own password field, with the frame's user field: allowed.
    await rig().mcp.ok("fill_form", { tabId, fields: both.slice(0, 3), allowPassword: true });
    expect(await values(page.mainFrame())).toEqual(["ada", PASSWORD]);
    expect(await values(frame)).toEqual(["ada", ""]);
  });

  test("an empty list and too many fields: invalid_argument naming fields, untouched", async () => {
    const { tabId, page, fields } = await openForm();
    await refused({ tabId, fields: [] }, "invalid_argument", /fields: must have at least 1 items/, page);
    const many = Array.from({ length: 51 }, (_, i) => fields[i % fields.length]);
    await refused({ tabId, fields: many }, "invalid_argument", /fields: must have at most 50 items/, page);
    await refused({ tabId, fields: [{ value: "x" }] }, "invalid_argument", /fields\.0: give ref or selector/, page);
    await refused({ tabId, fields: [{ ref: fields[0]?.ref, selector: "#name", value: "x" }] }, "invalid_argument", /fields\.0: give ref or selector/, page);
  });

  test("the effect guard is armed for the batch: the page's own submit on a change is stopped when submit is denied", async () => {
    await policy({ submit: "deny" });
    const { tabId, page, fields } = await openForm("?autosubmit=1");
    const r = await rig().mcp.call("fill_form", { tabId, fields, allowPassword: true });
    expect(r.isError, r.text).toBe(true);
    expect(r.error?.code, r.text).toBe("approval_denied");
    const s = await formState(page);
    expect(s.out).toBe("");
    expect(page.url()).toContain("form-all.html");
  });

  test("act mode off: act_mode_off before anything is touched", async () => {
    const { tabId, page, fields } = await openForm();
    await setPolicy(ext(), { rules: [{ pattern: `127.0.0.1:${rig().site.port}` }], actMode: false });
    await refused({ tabId, fields, allowPassword: true }, "act_mode_off", /act_mode_off/, page);
  });
});

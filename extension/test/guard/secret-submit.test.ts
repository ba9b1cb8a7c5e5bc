// @vitest-environment jsdom
// Where a form would send the field a secret went into (SECURITY I-69): read past a page's
// clobbered form properties, and judged against the secret's origins. The key half of the grant
// needs trusted events; it is covered in real Chromium (e2e secrets-submit).
import { describe, expect, it } from "vitest";
import { defaultButton, formOf, formRequest, grantCovers, sendsSecretElsewhere, type SubmitGrant } from "../../src/guard/secret-submit.js";

function setup(html: string): { form: HTMLFormElement; pw: HTMLInputElement; grant: SubmitGrant } {
  document.body.innerHTML = html;
  const pw = document.getElementById("pw") as HTMLInputElement;
  const form = document.getElementById("f") as HTMLFormElement;
  return { form, pw, grant: { token: "t", el: pw, origins: ["https://a.example"], spent: new Set() } };
}

/** The guard judges the submit event while it is dispatched (its path is gone afterwards). */
function judged(g: SubmitGrant | undefined, token: string, form: HTMLFormElement): boolean {
  let out: boolean | undefined;
  const on = (e: Event) => (out = sendsSecretElsewhere(g, token, e, null));
  window.addEventListener("submit", on, { capture: true, once: true });
  form.dispatchEvent(new SubmitEvent("submit", { bubbles: true, cancelable: true }));
  return out as boolean;
}

describe("the form a secret's field would be sent with", () => {
  it("reads the action past a field named action, and a submitter's formaction", () => {
    const { form } = setup(`<form id="f" method="post" action="https://b.example/collect"><input id="pw" type="password"><input name="action" value="/ok"><input name="method" value="dialog"><button id="go" formaction="https://c.example/x">go</button></form>`);
    expect(formRequest(form, null)).toEqual({ url: "https://b.example/collect", method: "post" });
    expect(formRequest(form, document.getElementById("go")).url).toBe("https://c.example/x");
    expect(defaultButton(form)?.id).toBe("go");
  });
  it("a form posting to the secret's own origin passes; another origin, or one the page cannot parse, does not", () => {
    const own = setup(`<form id="f" method="post" action="https://a.example/done"><input id="pw" type="password"><button>go</button></form>`);
    expect(judged(own.grant, "t", own.form)).toBe(false);
    const other = setup(`<form id="f" method="post" action="https://b.example/collect"><input id="pw" type="password"><button>go</button></form>`);
    expect(judged(other.grant, "t", other.form)).toBe(true);
    // A dialog form sends nothing.
    const dialog = setup(`<form id="f" method="dialog" action="https://b.example/collect"><input id="pw" type="password"></form>`);
    expect(judged(dialog.grant, "t", dialog.form)).toBe(false);
  });
  it("only the form that holds the field, only for the call that was granted", () => {
    const { grant, form } = setup(`<form id="f" action="https://b.example/x"><input id="pw" type="password"></form><form id="g" action="https://b.example/y"><input></form>`);
    const g = document.getElementById("g") as HTMLFormElement;
    expect(judged(grant, "t", g)).toBe(false);
    expect(judged(grant, "other-call", form)).toBe(false);
    expect(judged(undefined, "t", form)).toBe(false);
  });
  it("a field joined to a form by its form attribute belongs to that form", () => {
    const { pw } = setup(`<form id="f" action="https://b.example/x"></form><input id="pw" type="password" form="f">`);
    expect(formOf(pw)?.id).toBe("f");
  });
  it("an untrusted key never counts as the submit key", () => {
    const { grant, pw } = setup(`<form id="f"><input id="pw" type="password"></form>`);
    expect(grantCovers(grant, "t", new KeyboardEvent("keydown", { key: "Enter" }), pw)).toBe(false);
  });
});
